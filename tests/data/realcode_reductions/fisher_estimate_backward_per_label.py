# reduction-of: continual-learning@e6d795aa81b9 models/cl/continual_learner.py:240 GA302
# false: GA302
# quiet: GA302
"""EWC's Fisher estimate as continual-learning writes it: one forward per sample, then for each
class a backward of that class's negative log-likelihood through the same output, with
`retain_graph=True` on all but the last, squaring and summing the gradients in between. Training
steps an optimizer elsewhere.

False finding: GA302 suspicious, "keeps a graph built before this loop alive, and every
iteration's loss backpropagates through it again". Backpropagating one forward once per class is
what retain_graph is for; no step() runs between those backward() calls. The graph-before-the-loop
case is now reported only when the loop steps an optimizer.

Verified with torch 2.13 (CPU): the estimate is finite and the training steps run. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def estimate_fisher(model, data):
    fisher = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    for x in data:
        output = model(x)
        for label_index in range(output.shape[1]):
            label = torch.tensor([label_index])
            nll = F.cross_entropy(output, label)
            model.zero_grad()
            nll.backward(retain_graph=(label_index + 1) < output.shape[1])
            for n, p in model.named_parameters():
                fisher[n] += p.grad.detach() ** 2
    return fisher


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(3):
    loss = F.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 3, (8,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
fisher = estimate_fisher(model, [torch.randn(1, 4) for _ in range(4)])
assert all(torch.isfinite(f).all() for f in fisher.values())
print("OK")

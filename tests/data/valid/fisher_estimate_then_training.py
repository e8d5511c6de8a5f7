# runtime: trains
"""EWC over a sequence of tasks: each task trains, then the Fisher information is estimated from
one forward per sample, backpropagated once per class with `retain_graph=True` until the last class,
with no step() in that loop. Re-using the retained graph inside the estimate is what retain_graph is
for; the next task's steps, in the same loop over tasks, do not make it a stale history."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
fisher = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
anchor = {n: p.detach().clone() for n, p in model.named_parameters()}

for task in range(3):
    data = [(torch.randn(1, 4), torch.randint(0, 3, (1,))) for _ in range(4)]
    for x, y in data:
        optimizer.zero_grad()
        penalty = sum((fisher[n] * (p - anchor[n]) ** 2).sum() for n, p in model.named_parameters())
        loss = F.cross_entropy(model(x), y) + penalty
        loss.backward()
        optimizer.step()
    for x, _ in data:
        output = model(x)
        for label in range(output.shape[1]):
            nll = F.cross_entropy(output, torch.tensor([label]))
            model.zero_grad()
            nll.backward(retain_graph=True if label + 1 < output.shape[1] else False)
            for n, p in model.named_parameters():
                fisher[n] += p.grad.detach() ** 2
    anchor = {n: p.detach().clone() for n, p in model.named_parameters()}

# runtime: graph-kept: all_predictions
"""First-order MAML whose task predictions go into one list made before the meta-batches: each
meta-batch's update happens after its task loop, but the list outlives every update, so the graphs
of all the run's tasks stay alive with it (the valid form makes the list inside the meta-batch,
see tests/data/realcode_reductions/meta_batch_predictions_list.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(6, 3)
meta_optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
all_predictions = []
for batch in range(3):
    task_losses = []
    for _ in range(2):
        xs, ys, xq, yq = torch.randn(5, 6), torch.arange(5) % 3, torch.randn(9, 6), torch.arange(9) % 3
        fast = dict(model.named_parameters())
        grads = torch.autograd.grad(F.cross_entropy(F.linear(xs, fast["weight"], fast["bias"]), ys), list(fast.values()))
        fast = {n: p - 0.4 * g for (n, p), g in zip(fast.items(), grads)}
        logits = F.linear(xq, fast["weight"], fast["bias"])
        task_losses.append(F.cross_entropy(logits, yq))
        all_predictions.append(logits.softmax(dim=1))  # <- GA303
    meta_optimiser.zero_grad()
    torch.stack(task_losses).mean().backward()
    meta_optimiser.step()
print(len(all_predictions))

# runtime: trains
"""An attack-style cost divided in place by a per-sample norm only where that norm is not 0
(`cost[mask] /= norm[mask]` with `mask = norm != 0`): the zero norms are never divisors, and
training runs with finite gradients."""
import torch
import torch.nn as nn

model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(6, 4)
    shift = torch.randn(6, 4)
    shift[:3] = 0
    cost = model(x + shift).pow(2).sum(dim=1)
    norm = shift.abs().amax(dim=1)
    nonzero = norm != 0
    cost[nonzero] /= norm[nonzero]
    loss = cost.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: nonfinite
# confidence: suspicious
"""An ACER-style bias correction whose importance weight is computed from the live policy, not a
detached copy: `(1 - c / rho).clamp(min=0)` maps the inf of a zero probability to 0 in the value,
but the clamp's zero gradient meets the division's infinite one, 0 * inf = NaN, and the NaN reaches
every parameter of the policy. (With `pi.detach()` the same line is safe: see the reduction
truncated_weight_clamped.)"""
import torch
import torch.nn as nn
import torch.nn.functional as F

c = 1.0
torch.manual_seed(0)
policy = nn.Linear(4, 2)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for it in range(3):
    s = torch.randn(5, 4)
    behaviour = torch.full((5, 2), 0.5)
    logits = policy(s) + torch.tensor([200.0, 0.0])  # one action's probability underflows to 0
    pi = F.softmax(logits, dim=1)
    rho = pi / behaviour
    correction = (1 - c / rho).clamp(min=0)  # <- GA402
    loss = -(correction * torch.log_softmax(logits, 1)).sum(1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

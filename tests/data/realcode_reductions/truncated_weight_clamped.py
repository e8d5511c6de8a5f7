# reduction-of: minimalRL@c8efed8481e3 acer.py:88 GA402
# false: GA402
# quiet: GA402
"""ACER's truncated bias correction: `rho = pi.detach() / behaviour_prob`, then
`correction = (1 - c / rho).clamp(min=0)` with `c` a positive number.

False finding: GA402 suspicious at `c / rho`: "division by a value that can be exactly 0". Where a
probability underflows to 0, rho is 0 and `c / rho` is +inf (c is a nonzero number: never 0 / 0 =
NaN), `1 - inf` is -inf, and the clamp's lower bound makes it exactly 0. rho is detached, so no
gradient passes the division (where one did, the clamp's zero gradient times the division's
infinite one would be NaN: still flagged, see tests/data/bugs/truncated_weight_clamped_with_gradient.py).

Verified with torch 2.13 (CPU): in the first iteration an action's probability is exactly 0, rho
is 0 there, the correction is finite and every gradient is finite; the policy trains. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

c = 1.0  # truncation of the importance weights
torch.manual_seed(0)
fc = nn.Linear(4, 3)
head_pi, head_q = nn.Linear(3, 2), nn.Linear(3, 2)
optimizer = torch.optim.Adam([*fc.parameters(), *head_pi.parameters(), *head_q.parameters()], lr=1e-2)
for it in range(4):
    s = torch.randn(5, 4)
    a = torch.randint(0, 2, (5, 1))
    behaviour = torch.full((5, 2), 0.5)  # the behaviour policy's probabilities, stored with the batch
    h = F.relu(fc(s))
    logits = head_pi(h)
    if it == 0:
        logits = logits + torch.tensor([200.0, 0.0])  # an action whose probability underflows to 0
    pi = F.softmax(logits, dim=1)
    q = head_q(h)
    v = (q * pi).sum(1, keepdim=True).detach()
    rho = pi.detach() / behaviour
    correction = (1 - c / rho).clamp(min=0)
    if it == 0:
        assert (rho == 0).any() and torch.isfinite(correction).all()
    loss = -(correction * pi.detach() * torch.log_softmax(logits, 1) * (q.detach() - v)).sum(1).mean()
    loss = loss + F.smooth_l1_loss(q.gather(1, a), torch.randn(5, 1))
    optimizer.zero_grad()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in fc.parameters())
    optimizer.step()
print("OK")

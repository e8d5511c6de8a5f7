# runtime: trains
"""Four Q-networks, each with a target network built as a fresh instance and kept out of the
optimizer; the bootstrap targets are computed outside no_grad, so the target networks get
gradient, but each one changes by its own averaging update: `lerp_` under no_grad,
`torch._foreach_lerp_`, `mul_().add_()` under no_grad, and a hard `load_state_dict` sync every other step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def qnet():
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))


@torch.no_grad()
def soft_update(target, online, tau):
    for t, p in zip(target.parameters(), online.parameters()):
        t.lerp_(p, tau)


def td_loss(q, q_target, s, a, r, s2):
    return F.mse_loss(q(s).gather(1, a).squeeze(1), r + 0.9 * q_target(s2).max(1)[0])


torch.manual_seed(0)
q1, q2, q3, q4 = qnet(), qnet(), qnet(), qnet()
q1_target, q2_target, q3_target, q4_target = qnet(), qnet(), qnet(), qnet()
targets = (q1_target, q2_target, q3_target, q4_target)
opt = torch.optim.Adam([*q1.parameters(), *q2.parameters(), *q3.parameters(), *q4.parameters()], lr=1e-2)
start = [t[0].weight.detach().clone() for t in targets]
for step in range(4):
    s, a, r, s2 = torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8), torch.randn(8, 4)
    loss = td_loss(q1, q1_target, s, a, r, s2) + td_loss(q2, q2_target, s, a, r, s2)
    loss = loss + td_loss(q3, q3_target, s, a, r, s2) + td_loss(q4, q4_target, s, a, r, s2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    soft_update(q1_target, q1, 0.1)
    with torch.no_grad():
        torch._foreach_lerp_(list(q2_target.parameters()), list(q2.parameters()), 0.1)
        for t, p in zip(q4_target.parameters(), q4.parameters()):
            t.mul_(0.9).add_(p, alpha=0.1)
    if step % 2 == 1:
        q3_target.load_state_dict(q3.state_dict())
assert all(not torch.equal(w, t[0].weight) for w, t in zip(start, targets))

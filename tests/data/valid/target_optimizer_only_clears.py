# runtime: trains
"""A critic and its target network each get an optimizer, but the target's optimizer is only used to
clear the gradients the TD target sends into it (`target_optimizer.zero_grad()`) and never steps:
the target changes by a soft update (`lerp_` under no_grad) after every step instead."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
critic, critic_target = nn.Linear(4, 1), nn.Linear(4, 1)
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
target_optimizer = torch.optim.Adam(critic_target.parameters(), lr=1e-3)
start = critic_target.weight.detach().clone()
for step in range(5):
    s, r, s2 = torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 4)
    loss = F.mse_loss(critic(s), r + 0.99 * critic_target(s2))
    optimizer.zero_grad()
    target_optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for t, p in zip(critic_target.parameters(), critic.parameters()):
            t.lerp_(p, 0.05)
assert not torch.equal(start, critic_target.weight)

# runtime: no-update: critic_target
"""A critic and its target network each get an optimizer; the target's optimizer clears the
gradients the TD target sends into it but never steps, and no soft update was written: the target
network keeps its initial weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
critic, critic_target = nn.Linear(4, 1), nn.Linear(4, 1)
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
target_optimizer = torch.optim.Adam(critic_target.parameters(), lr=1e-3)
for step in range(5):
    s, r, s2 = torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 4)
    loss = F.mse_loss(critic(s), r + 0.99 * critic_target(s2))
    optimizer.zero_grad()
    target_optimizer.zero_grad()
    loss.backward()  # <- GA204
    optimizer.step()

# runtime: no-update: critic_target
"""A TD critic with a target network built as a second instance of the critic; the bootstrap
target is computed outside no_grad, so the target network gets gradient, but it is in no
optimizer and the soft update was never written: it keeps its random initial weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], 1))


torch.manual_seed(0)
critic, critic_target = Critic(), Critic()
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)  # <- GA108
for step in range(5):
    s, a, r, s2, a2 = torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 1), torch.randn(8, 4), torch.randn(8, 1)
    y = r + 0.99 * critic_target(s2, a2)
    loss = F.mse_loss(critic(s, a), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

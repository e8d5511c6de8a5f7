# runtime: no-update: critic
"""Actor-critic whose value loss is built on a detached value: the advantage's detach is the
idiom, the value loss's is the break."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(2)
actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-2)
for episode in range(3):
    state, reward = torch.randn(6, 4), torch.randn(6)
    dist = Categorical(logits=actor(state))
    action = dist.sample()
    value = critic(state).squeeze(1)
    advantage = reward - value.detach()
    policy_loss = -(dist.log_prob(action) * advantage).mean()
    value_loss = F.mse_loss(value.detach(), reward)  # <- GA101
    loss = policy_loss + 0.5 * value_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

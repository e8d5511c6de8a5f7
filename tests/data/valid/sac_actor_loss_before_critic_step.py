# runtime: trains
"""Soft actor-critic as rlkit fixed it: the actor's reparameterised action is scored by the critic
and the policy loss backpropagated and stepped before the critic's update changes the critic's
weights; the critic's gradients from the policy loss are cleared before its own backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 1)
        self.log_std = nn.Linear(4, 1)

    def forward(self, state):
        dist = Normal(self.mu(state), self.log_std(state).clamp(-5, 2).exp())
        z = dist.rsample()
        return z.tanh(), dist.log_prob(z)


torch.manual_seed(0)
actor, critic = Actor(), nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for step in range(3):
    state, action, target = torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 1)
    new_action, log_prob = actor(state)
    policy_loss = (0.2 * log_prob - critic(torch.cat([state, new_action], 1))).mean()
    actor_opt.zero_grad()
    policy_loss.backward()
    actor_opt.step()
    critic_loss = F.mse_loss(critic(torch.cat([state, action], 1)), target)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()

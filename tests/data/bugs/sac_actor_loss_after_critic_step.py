# runtime: error: modified by an inplace operation
"""Soft actor-critic (after rlkit and pg-is-all-you-need): the actor's action is a reparameterised
draw (`Normal(mu, std).rsample()`), scored by the critic for the policy loss before the critic's
own update. The critic's optimizer then changes the critic's weights in place, and the policy
loss's backward goes through the critic's old graph, which saved those weights: it raises."""
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
    q_new = critic(torch.cat([state, new_action], 1))  # <- GA304
    policy_loss = (0.2 * log_prob - q_new).mean()
    critic_loss = F.mse_loss(critic(torch.cat([state, action], 1)), target)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    actor_opt.zero_grad()
    policy_loss.backward()
    actor_opt.step()

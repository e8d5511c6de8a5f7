# runtime: stale-grads
"""Actor-critic with one optimizer per network: only the actor's gradients are cleared each
update, so the critic's step keeps applying every earlier gradient again."""
import torch
import torch.nn as nn
from torch.distributions import Normal


class Actor(nn.Module):
    def __init__(self, obs, act):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, act))
        self.log_std = nn.Parameter(torch.zeros(act))

    def forward(self, s):
        return Normal(self.mu(s), self.log_std.exp())


class Critic(nn.Module):
    def __init__(self, obs):
        super().__init__()
        self.v = nn.Sequential(nn.Linear(obs, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, s):
        return self.v(s).squeeze(-1)


def update(actor, critic, actor_opt, critic_opt, batch, gamma=0.99):
    s, a, r, s2 = batch
    with torch.no_grad():
        target = r + gamma * critic(s2)
    value = critic(s)
    advantage = (target - value).detach()
    actor_loss = -(actor(s).log_prob(a).sum(-1) * advantage).mean()
    critic_loss = (target - value).pow(2).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    critic_loss.backward()
    critic_opt.step()  # <- GA201


torch.manual_seed(0)
actor, critic = Actor(3, 1), Critic(3)
actor_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for it in range(4):
    batch = (torch.randn(16, 3), torch.randn(16, 1), torch.randn(16), torch.randn(16, 3))
    update(actor, critic, actor_opt, critic_opt, batch)

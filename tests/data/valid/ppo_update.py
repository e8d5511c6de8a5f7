# runtime: trains
"""A PPO-style update: detached old log-probs and advantages; clipped ratio; value loss."""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, n_obs=6, n_act=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, 32), nn.Tanh())
        self.pi = nn.Linear(32, n_act)
        self.v = nn.Linear(32, 1)

    def forward(self, obs):
        h = self.body(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


torch.manual_seed(4)
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
obs = torch.randn(64, 6)
with torch.no_grad():
    dist, values = policy(obs)
    actions = dist.sample()
    old_logp = dist.log_prob(actions)
returns = values + torch.randn(64)
advantages = (returns - values)
advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
for epoch in range(3):
    dist, v = policy(obs)
    ratio = torch.exp(dist.log_prob(actions) - old_logp)
    clipped = torch.clamp(ratio, 0.8, 1.2)
    policy_loss = -torch.min(ratio * advantages, clipped * advantages).mean()
    value_loss = 0.5 * (returns - v).pow(2).mean()
    loss = policy_loss + value_loss - 0.01 * dist.entropy().mean()
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    optimizer.step()

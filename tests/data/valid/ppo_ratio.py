# runtime: trains
"""A PPO update: the probability ratio is exp of a log-probability difference, clipped; the value
loss and entropy are part of the total; several epochs over one rollout."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
value_fn = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam([*policy.parameters(), *value_fn.parameters()], lr=3e-4)

states = torch.randn(32, 4)
with torch.no_grad():
    dist = Categorical(logits=policy(states))
    actions = dist.sample()
    old_logp = dist.log_prob(actions)
    returns = torch.randn(32)
    adv = returns - value_fn(states).squeeze(-1)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)

for epoch in range(4):
    dist = Categorical(logits=policy(states))
    ratio = torch.exp(dist.log_prob(actions) - old_logp)
    surr = torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv)
    v_loss = (value_fn(states).squeeze(-1) - returns).pow(2).mean()
    loss = -surr.mean() + 0.5 * v_loss - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    opt.step()

# runtime: trains
"""REINFORCE: discounted returns built from Python floats and a parsed command line, turned into a
tensor with torch.tensor(): they carry no gradient, so nothing is rewrapped."""
import argparse
import types

import torch
import torch.nn as nn
from torch.distributions import Categorical

parser = argparse.ArgumentParser()
parser.add_argument("--gamma", type=float, default=0.99)
args = parser.parse_args([])
config = types.SimpleNamespace(reward_scale=0.5, eps=1e-8)

torch.manual_seed(3)
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(3):
    log_probs, rewards = [], []
    for t in range(5):
        dist = Categorical(logits=policy(torch.randn(4)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        rewards.append(config.reward_scale * float(action.item() == t % 2))
    R, returns = 0.0, []
    for r in reversed(rewards):
        R = r + args.gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + config.eps)
    loss = torch.stack([-lp * g for lp, g in zip(log_probs, returns)]).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

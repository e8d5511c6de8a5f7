# runtime: no-update: critic
"""Returns bootstrapped from the critic's own values, rebuilt with torch.tensor(): the values
carry gradient, so the critic is cut off (a parsed command line sits next to it)."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--gamma", type=float, default=0.9)
args = parser.parse_args([])

torch.manual_seed(3)
critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
head = nn.Linear(3, 1)
optimizer = torch.optim.SGD([*critic.parameters(), *head.parameters()], lr=0.1)
for it in range(3):
    states = torch.randn(5, 3)
    values = critic(states).squeeze(1)
    returns = torch.tensor([args.gamma * v for v in values])  # <- GA104
    loss = ((head(states).squeeze(1) - returns) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

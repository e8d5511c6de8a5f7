# runtime: trains
"""REINFORCE with the per-episode lists on the policy, emptied with `del lst[:]` after each
update: the next episode's loss is built from new log-probabilities only."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine = nn.Linear(4, 16)
        self.head = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        return F.softmax(self.head(F.relu(self.affine(x))), dim=-1)


torch.manual_seed(0)
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(3):
    for t in range(4):
        m = Categorical(policy(torch.randn(1, 4)))
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        policy.rewards.append(float(action.item()))
    R, returns = 0.0, []
    for r in policy.rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    loss = torch.cat([-lp * g for lp, g in zip(policy.saved_log_probs, returns)]).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]

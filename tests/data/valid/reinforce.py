# runtime: trains
"""REINFORCE with normalised returns: log-probabilities collected in a list and stacked, returns
built from Python floats and standardised with an eps."""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 24), nn.ReLU(), nn.Linear(24, 3))

    def act(self, state):
        dist = Categorical(logits=self.net(state))
        action = dist.sample()
        return action.item(), dist.log_prob(action)


def discounted(rewards, gamma):
    out, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        out.insert(0, g)
    return out


def finish_episode(policy, optimizer, log_probs, rewards, gamma=0.99):
    returns = torch.tensor(discounted(rewards, gamma))
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    loss = -(torch.stack(log_probs) * returns).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


torch.manual_seed(0)
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(3):
    log_probs, rewards = [], []
    state = torch.randn(4)
    for t in range(6):
        action, log_prob = policy.act(state)
        log_probs.append(log_prob)
        rewards.append(1.0 if action == 0 else 0.0)
        state = torch.randn(4)
    finish_episode(policy, optimizer, log_probs, rewards)

# runtime: trains
"""A REINFORCE policy whose network ends in a softmax, handed to `Categorical(logits=...)`: the
distribution applies log_softmax to what it is given, so the probabilities are normalised a second
time. Values in [0, 1] keep every action within a factor e of the others: the policy can never
become confident, and its gradients shrink as the network tries."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 32)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return F.softmax(self.head(torch.relu(self.body(x))), dim=-1)


torch.manual_seed(0)
policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(5):
    states = torch.randn(16, 4)
    dist = Categorical(logits=policy(states))  # <- GA407
    actions = dist.sample()
    returns = (actions == 2).float() - 0.3
    loss = -(dist.log_prob(actions) * returns).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

"""The same policy giving `Categorical` its logits as `logits=` and, in a second head, its softmax
probabilities as `probs=`: each normalised once."""
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
        return self.head(torch.relu(self.body(x)))


torch.manual_seed(0)
policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(5):
    states = torch.randn(16, 4)
    logits = policy(states)
    dist = Categorical(logits=logits)
    same = Categorical(probs=F.softmax(logits, dim=-1))
    actions = dist.sample()
    returns = (actions == 2).float() - 0.3
    loss = -(dist.log_prob(actions) * returns).mean() - 0.01 * same.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# reduction-of: minimalRL@c8efed8481e3 REINFORCE.py:35 GA301
# false: GA301, GA401
# quiet: GA401
"""REINFORCE that calls backward() once per step of the finished episode, walking the stored
(reward, probability) pairs backwards, then steps once.

Each stored probability comes from its own forward pass during the episode (`prob = pi(state)`,
one per environment step), so each backward() frees a graph no other one reaches: separate graphs,
not one graph taken for all.

False finding: GA301 confirmed at `loss.backward()`: "shares part of its graph with a loss whose
backward() already ran". The engine joins the elements of a list into one value; a for-loop over a
container of several elements takes one element per iteration, so the graphs of the elements are
no longer taken for one graph every iteration reaches again.

The log of the probability of an action just sampled from that same distribution drew GA401
(suspicious) too: a sampled category had probability > 0, so the engine now takes an index drawn
from a distribution (`.sample()`, `torch.multinomial`) as picking a probability that is not 0.

Verified with torch 2.13 (CPU): the episode's per-step backward() calls run without error and the
policy changes. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 32)
        self.fc2 = nn.Linear(32, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=0)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self, gamma=0.98):
        R = 0
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            R = r + gamma * R
            loss = -torch.log(prob) * R
            loss.backward()
        self.optimizer.step()
        self.data = []


torch.manual_seed(0)
pi = Policy()
before = pi.fc2.weight.detach().clone()
for episode in range(3):
    state = torch.randn(4)
    for t in range(5):
        prob = pi(state)
        a = Categorical(prob).sample()
        pi.put_data((1.0, prob[a]))
        state = torch.randn(4)
    pi.train_net()
assert not torch.equal(before, pi.fc2.weight)
print("OK")

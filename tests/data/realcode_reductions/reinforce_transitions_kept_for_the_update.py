# reduction-of: minimalRL@c8efed8481e3 REINFORCE.py:27 GA303
# false: GA303
# quiet: GA303
"""REINFORCE as minimalRL writes it: each step of an episode stores `(reward, prob[a])`, the
probability of the sampled action with its graph, in the policy's list; after the episode,
`train_net` walks the list backwards, backpropagates `-log(prob) * return` for each and steps.

False finding: GA303 confirmed at `self.data.append(item)`, "a tensor with its autograd graph is
accumulated into state that outlives the iteration". The graphs are kept for the update, which
backpropagates each of them and then empties the list. The transition tuple's parts lost the
accumulation's record when stored, so the losses made of them later did not show it was
backpropagated; the parts now keep it.

Verified with torch 2.13 (CPU): three episodes, every backward succeeding and the policy
changing. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=0)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        ret = 0.0
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            ret = r + 0.98 * ret
            loss = -torch.log(prob) * ret
            loss.backward()
        self.optimizer.step()
        self.data = []


torch.manual_seed(0)
pi = Policy()
for _episode in range(3):
    for _t in range(5):
        prob = pi(torch.randn(4))
        a = Categorical(prob).sample()
        pi.put_data((1.0, prob[a]))
    pi.train_net()
print("OK")

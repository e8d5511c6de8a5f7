# reduction-of: pytorch-examples@77f55b912142 reinforcement_learning/reinforce.py:76 GA301
# false: GA301
"""REINFORCE whose buffers of log-probabilities and rewards are emptied with `del buf[:]` after each update.

The real code (pytorch/examples reinforce.py, and actor_critic.py alike): `select_action` appends
`m.log_prob(action)` to `policy.saved_log_probs`; `finish_episode` sums `-log_prob * R`, calls
`backward()` and `step()`, then `del policy.rewards[:]` and `del policy.saved_log_probs[:]`.

False finding: GA301 confirmed at `policy_loss.backward()`: "shares part of its graph with a loss whose
backward() already ran ... raises 'Trying to backward through the graph a second time'". `del lst[:]`
empties the list in place, so the next episode's loss is built from that episode's log-probs only.
The engine handles `policy.log_probs = []` (no finding) but neither `del lst[:]` nor `lst.clear()`.

Verified with torch 2.13 (CPU): three episodes train without error; every parameter changes in each
update and the buffer is empty after it. Prints OK.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
        self.log_probs = []
        self.rewards = []

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)


def act(state):
    dist = Categorical(policy(state))
    action = dist.sample()
    policy.log_probs.append(dist.log_prob(action))
    return action.item()


def finish_episode():
    loss = torch.stack([-lp * r for lp, r in zip(policy.log_probs, policy.rewards)]).sum()
    before = [p.detach().clone() for p in policy.parameters()]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    assert all(not torch.equal(b, p) for b, p in zip(before, policy.parameters()))
    del policy.rewards[:]
    del policy.log_probs[:]


torch.manual_seed(0)
for episode in range(3):
    for t in range(5):
        act(torch.randn(1, 4))
        policy.rewards.append(float(t % 2) - 0.5)
    finish_episode()
    assert policy.log_probs == [] and policy.rewards == []
print("OK")

# reduction-of: Deep-reinforcement-learning-with-pytorch@7b9fac7e5e40 Char02 Policy Gradient/REINFORCE_with_Baseline.py:82 GA112
# false: GA112
"""REINFORCE with a baseline, as that tutorial wrote it: the action drawn with `m.sample()` is
made a Python number and handed to the environment, whose rewards make the return G; the value
network's loss is `-(G - V(s))`.

False finding: GA112 confirmed at `m.sample()`: "the policy's parameters reach the value loss only
through the draw". They do, through the environment's rewards, by design: the draw is an action,
not a value the code meant to train through (the policy trains on `log_prob * delta`). The real
defect there is the value loss's optimizer built over the policy (GA108, kept).

Verified with torch 2.13 (CPU): the policy trains through its log-probability term; the value
network never changes (its loss's optimizer holds the policy). Prints OK.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Env:
    def step(self, a):
        return 0.5 * a - 0.1


torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 2), nn.Softmax(-1))
value = nn.Linear(4, 1)
opt_pi = torch.optim.Adam(policy.parameters(), lr=1e-2)
opt_v = torch.optim.Adam(policy.parameters(), lr=1e-2)  # the tutorial's slip: GA108
env = Env()
start = [p.detach().clone() for m in (policy, value) for p in m.parameters()]
for episode in range(3):
    state = torch.randn(1, 4)
    m = Categorical(policy(state))
    action = m.sample()
    log_prob = m.log_prob(action)
    reward = env.step(action.item())
    delta = reward - value(state)
    opt_v.zero_grad()
    (delta**2).mean().backward()
    opt_v.step()
    opt_pi.zero_grad()
    (-log_prob * delta.detach()).mean().backward()
    opt_pi.step()
end = [p for m in (policy, value) for p in m.parameters()]
assert all(not torch.equal(a, b) for a, b in zip(start[:2], end[:2]))
assert all(torch.equal(a, b) for a, b in zip(start[2:], end[2:]))
print("OK")

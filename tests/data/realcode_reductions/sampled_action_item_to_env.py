# reduction-of: Deep-reinforcement-learning-with-pytorch@7b9fac7e5e40 Char02 Policy Gradient/REINFORCE_with_Baseline.py:86 GA103
# false: GA103
# quiet: GA103
"""REINFORCE with a baseline, as published: each step draws an action with
`Categorical(probs).sample()` and hands `action.item()` to the environment; the rewards become
returns and the baseline's loss is `-(G - V)`, but its optimizer was built from the policy's
parameters instead of the value network's (a real defect: GA108, the value network never trains).

False finding beside it: GA103 suspicious at `action.item()`: "carries no gradient to the
parameters of `policy`, so `optimizer_w` never changes them". A sample drawn from a torch
distribution never carries gradient (`sample()` runs under no_grad; `rsample()` is the
differentiable draw), so `.item()` of it cuts nothing: the policy misses the baseline's loss because
that loss never involved it. The engine did not model `torch.distributions` and let the draw carry
the policy's parameters weakly.

Verified with torch 2.13 (CPU): the sampled action has no grad_fn, the policy gets no gradient from
the baseline's loss and the value network never changes. Prints OK.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Softmax(dim=1))
value = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer_w = torch.optim.Adam(policy.parameters(), lr=1e-2)
before = [p.detach().clone() for p in value.parameters()]

for episode in range(3):
    states, rewards = [], []
    for t in range(5):
        state = torch.randn(1, 4)
        states.append(state)
        m = Categorical(policy(state))
        action = m.sample()
        assert action.grad_fn is None and not action.requires_grad
        a = action.item()  # handed to the environment
        rewards.append(float(a == 1))
    for i in range(len(rewards)):
        delta = rewards[i] - value(states[i])
        loss = -delta.sum()
        optimizer_w.zero_grad()
        loss.backward()
        assert all(p.grad is None for p in policy.parameters())
        optimizer_w.step()

assert all(torch.equal(b, p) for b, p in zip(before, value.parameters()))
print("OK")

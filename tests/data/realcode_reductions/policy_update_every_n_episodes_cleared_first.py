# reduction-of: Deep-reinforcement-learning-with-pytorch@7b9fac7e5e40 Char02 Policy Gradient/naive-policy-gradient.py:132 GA202
# false: GA202
"""REINFORCE that updates every `batch_size` episodes: each episode's states, actions and rewards are
stored; under `if episode > 0 and episode % batch_size == 0:` the gradients are cleared, a backward
runs for every stored step, and the optimizer steps once.

False finding: GA202 confirmed at the clear, "cleared under the same condition as `optimizer.step()`
but before this micro-batch's `loss.backward()`". The backward runs under that condition too: no
gradient is accumulated outside it, and the step applies the sum over every stored step.

Verified with torch: the gradient the step applies equals the gradient of the sum of the stored
steps' losses (the assert below). Prints OK."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Softmax(dim=-1))
optimizer = torch.optim.SGD(policy.parameters(), lr=0.01)
batch_size = 3
state_pool, action_pool, reward_pool = [], [], []
for episode in range(7):
    for t in range(5):
        state = torch.randn(4)
        action = Categorical(policy(state)).sample()
        state_pool.append(state)
        action_pool.append(float(action))
        reward_pool.append(1.0)
    if episode > 0 and episode % batch_size == 0:
        optimizer.zero_grad()
        total = None
        for i in range(len(state_pool)):
            loss = -Categorical(policy(state_pool[i])).log_prob(torch.tensor(action_pool[i])) * reward_pool[i]
            loss.backward()
            total = loss.detach() if total is None else total + loss.detach()
        # the gradient applied is the one of the sum over every stored step
        expected = torch.autograd.grad(
            sum(
                -Categorical(policy(s)).log_prob(torch.tensor(a)) * r
                for s, a, r in zip(state_pool, action_pool, reward_pool)
            ),
            policy[0].weight,
        )[0]
        assert torch.allclose(policy[0].weight.grad, expected, atol=1e-5)
        optimizer.step()
        state_pool, action_pool, reward_pool = [], [], []
print("OK")

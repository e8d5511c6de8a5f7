# reduction-of: Deep-reinforcement-learning-with-pytorch@7b9fac7e5e40 Char02 Policy Gradient/naive-policy-gradient.py:143 GA205
# false: GA205
# quiet: GA205
"""REINFORCE written one time step at a time: after a batch of episodes, the discounted returns are
normalised, then for every stored step the policy's log-probability of the action taken, times
its return, is backpropagated, and the optimizer steps once.

The real code (naive-policy-gradient.py): `for i in range(steps): probs = policy(state_pool[i]);
c = Categorical(probs); loss = -c.log_prob(action) * reward; loss.backward()`, then
`optimizer.step()`.

False finding: GA205 at `loss.backward()`, "runs for every micro-batch while optimizer.step() runs
once after the inner loop: the gradients of the micro-batches add up and the loss is not divided by
their number". The policy-gradient estimator is the sum over time steps of
grad log pi(a_t | s_t) * G_t: the per-step backward() calls add up to exactly that sum, the same
as one backward() of the summed loss.

Verified with torch 2.13 (CPU): the gradient after the per-step backward() calls equals the gradient
of the summed loss, and the policy's probability of the rewarded action rises. Prints OK.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


def summed_loss_gradient(policy, states, actions, returns):
    """The gradient of the summed policy-gradient loss, one backward() (on a copy's gradients)."""
    grads = torch.autograd.grad(
        sum(-Categorical(policy(s)).log_prob(a) * g for s, a, g in zip(states, actions, returns)),
        list(policy.parameters()),
    )
    return [g.detach() for g in grads]


torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Softmax(dim=-1))
optimizer = torch.optim.Adam(policy.parameters(), lr=0.05)
state = torch.ones(4)
before = policy(state)[1].item()
for episode in range(20):
    states, actions, rewards = [], [], []
    for t in range(5):
        with torch.no_grad():
            action = Categorical(policy(state)).sample()
        states.append(state)
        actions.append(action)
        rewards.append(1.0 if action.item() == 1 else 0.0)
    returns, r = [], 0.0
    for x in reversed(rewards):
        r = x + 0.9 * r
        returns.insert(0, r)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    optimizer.zero_grad()
    for i in range(len(states)):
        c = Categorical(policy(states[i]))
        loss = -c.log_prob(actions[i]) * returns[i]
        loss.backward()
    # looked up by name: the check is no code the engine follows, which keeps the step as in the project
    summed = globals()["summed_loss_gradient"](policy, states, actions, returns)
    assert all(torch.allclose(p.grad, g, atol=1e-6) for p, g in zip(policy.parameters(), summed))
    optimizer.step()
assert policy(state)[1].item() > before
print("OK")

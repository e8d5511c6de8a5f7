# reduction-of: Deep-Reinforcement-Learning-Hands-On-Second-Edition@d5a421d63c6d Chapter08/08_dqn_rainbow.py:61 GA102
# false: GA102
# quiet: GA102
"""A DQN whose last layer is a noisy linear layer (a subclass of nn.Linear with a second weight),
and whose target network is a copy made by a library the checker cannot read; the target's values
are computed under no_grad, Q(s, a) outside it.

The real code (Deep-RL-Hands-On, chapters 8, 21, 25): `NoisyLinear(nn.Linear)` calling
`super().__init__(in_features, out_features, bias=bias)`; `tgt_net = ptan.agent.TargetNet(net)`;
in the loss `with torch.no_grad(): next_q = tgt_net.target_model(next_states).max(1)[0]`.

False finding: GA102 suspicious at the `with torch.no_grad():` ("records no graph for the
parameters of `net.2`"): the noisy layer's weight and bias are nn.Linear's, registered by the base
`__init__`; the online network's forward outside no_grad sends them gradient.

Verified with torch 2.13 (CPU): the noisy layer's weight, bias and sigma get gradients and change
at the step. Prints OK.
"""
import importlib

import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyLinear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias=bias)
        self.sigma_weight = nn.Parameter(torch.full((out_features, in_features), 0.017))
        self.register_buffer("epsilon_weight", torch.zeros(out_features, in_features))

    def forward(self, x):
        self.epsilon_weight.normal_()
        return F.linear(x, self.weight + self.sigma_weight * self.epsilon_weight, self.bias)


net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), NoisyLinear(16, 3))
tgt_net = getattr(importlib.import_module("copy"), "deepcopy")(net)  # a library's target network
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
states, next_states = torch.randn(8, 2), torch.randn(8, 2)
actions, rewards = torch.randint(0, 3, (8, 1)), torch.randn(8)
before = [p.detach().clone() for p in net[2].parameters()]


def calc_loss():
    q = net(states).gather(1, actions).squeeze(-1)
    with torch.no_grad():
        next_q = tgt_net(next_states).max(1)[0]
    return F.mse_loss(q, next_q * 0.99 + rewards)


optimizer.zero_grad()
loss = calc_loss()
loss.backward()
assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in net[2].parameters())
optimizer.step()
assert all(not torch.equal(a, b) for a, b in zip(before, net[2].parameters()))
print("OK")

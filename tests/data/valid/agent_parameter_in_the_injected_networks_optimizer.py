"""The same agent giving its optimizer both the injected actor's parameters and its own `log_std`;
a second agent hands its `log_std` to a module made by a factory the engine cannot see (which may
register it), before building the optimizer from that module's parameters."""
import sys

import torch
import torch.nn as nn
from torch.distributions import Normal


class Agent:
    def __init__(self, actor, act_dim):
        self.actor = actor
        self.log_std = nn.Parameter(torch.zeros(act_dim))
        self.optimizer = torch.optim.Adam([*self.actor.parameters(), self.log_std], lr=3e-4)

    def update(self, states, actions, advantages):
        dist = Normal(self.actor(states), self.log_std.exp())
        loss = -(dist.log_prob(actions).sum(-1) * advantages).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class WrappedAgent(Agent):
    def __init__(self, actor, act_dim):
        self.actor = actor
        self.log_std = nn.Parameter(torch.zeros(act_dim))
        self.actor.register_parameter("log_std", self.log_std)
        self.optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)


def make_ppo():
    return Agent(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2)), 2)


def make_wrapped():
    return WrappedAgent(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2)), 2)


algorithm = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].isidentifier() else "ppo"
agent = getattr(sys.modules[__name__], "make_" + algorithm)()
for update in range(5):
    agent.update(torch.randn(64, 4), torch.randn(64, 2), torch.randn(64))

# runtime: no-update: agent.log_std
# confidence: suspicious
"""A PPO agent for continuous actions (after CARES's PPO): the actor network is handed in by a
factory picked by name at run time, and the agent, which is no nn.Module, keeps its own learnable
`log_std` Parameter, clamped to its bounds after each update. The optimizer is built from the
actor's parameters alone: `log_std` gets a gradient through the Normal policy every update, and
never changes (the clamp only projects it). The engine cannot name the
actor's parameters, but `log_std` was made here and handed to no code it could not see."""
import sys

import torch
import torch.nn as nn
from torch.distributions import Normal


class Agent:
    def __init__(self, actor, act_dim):
        self.actor = actor
        self.log_std = nn.Parameter(torch.zeros(act_dim))
        self.optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)  # <- GA108

    def update(self, states, actions, advantages):
        dist = Normal(self.actor(states), self.log_std.exp())
        loss = -(dist.log_prob(actions).sum(-1) * advantages).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            self.log_std.clamp_(-5.0, 2.0)  # a projection onto its bounds: it learns nothing


def make_ppo():
    return Agent(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2)), 2)


algorithm = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].isidentifier() else "ppo"
agent = getattr(sys.modules[__name__], "make_" + algorithm)()
for update in range(5):
    agent.update(torch.randn(64, 4), torch.randn(64, 2), torch.randn(64))

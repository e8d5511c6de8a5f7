# reduction-of: DRL-code-pytorch@8f767b99ad44 4.PPO-discrete/ppo_discrete.py:142 GA204
# false: GA204
"""An agent builds its critic's optimizer on one arm of a flag (`if set_adam_eps: Adam(..., eps=1e-5)
else: Adam(...)`), then steps `self.optimizer_critic` after each backward().

False finding: GA204 confirmed at `critic_loss.backward()`: "`self.optimizer_critic`, which holds
them, never steps". Both optimizers existed for the engine, but the attribute kept only the last
arm's, so one of the two seemed never stepped. An attribute set under a condition now keeps both
values (the one stepped is whichever the flag chose).

Verified with torch 2.13 (CPU): with either value of the flag the critic changes. Prints OK.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class PPO:
    def __init__(self, set_adam_eps):
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
        if set_adam_eps:
            self.optimizer_critic = torch.optim.Adam(self.critic.parameters(), lr=1e-3, eps=1e-5)
        else:
            self.optimizer_critic = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def update(self, s, v_target):
        for _ in range(3):
            critic_loss = F.mse_loss(v_target, self.critic(s))
            self.optimizer_critic.zero_grad()
            critic_loss.backward()
            self.optimizer_critic.step()


torch.manual_seed(0)
for flag in (len(sys.argv) > 1, True):
    agent = PPO(flag)
    before = agent.critic[0].weight.detach().clone()
    agent.update(torch.randn(8, 4), torch.randn(8, 1))
    assert not torch.equal(before, agent.critic[0].weight)
print("OK")

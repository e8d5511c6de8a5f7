# reduction-of: deep-reinforcement-learning@561eec3ae867 ddpg-pendulum/ddpg_agent.py:46 GA108
# false: GA108
"""A DDPG critic whose target network is a second instance of the critic class, synced by a soft
update (`target.data.copy_(tau * local.data + (1 - tau) * target.data)`) after every learning step.

The real code (Udacity's DDPG agent) computes the critic's target with `critic_target(next_states,
actions_next)` outside `torch.no_grad()`, so the target network's parameters get gradient from
`critic_loss`; no optimizer holds them.

False finding: GA108 confirmed at the critic's optimizer: "12 parameters ... feed `critic_loss` but
are in no param group ..., so they never train". They are not meant to be trained by the optimizer:
the soft update changes them every step (updates are updates). The engine now counts any in-place
write of a parameter made while training (`.data` assignments, copy_, lerp_, mul_/add_ under
no_grad, torch._foreach_*) as an update.

Verified with torch 2.13 (CPU): the target's weights change at every step, only through the soft
update. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, state, action):
        return self.fc2(F.relu(self.fc1(torch.cat([state, action], 1))))


class Agent:
    def __init__(self, tau=0.05):
        self.critic_local = Critic()
        self.critic_target = Critic()
        self.critic_optimizer = torch.optim.Adam(self.critic_local.parameters(), lr=1e-3)
        self.tau = tau

    def learn(self, states, actions, rewards, next_states, actions_next, gamma=0.99):
        q_targets_next = self.critic_target(next_states, actions_next)
        q_targets = rewards + gamma * q_targets_next
        critic_loss = F.mse_loss(self.critic_local(states, actions), q_targets)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        self.soft_update(self.critic_local, self.critic_target)

    def soft_update(self, local_model, target_model):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(self.tau * local_param.data + (1.0 - self.tau) * target_param.data)


torch.manual_seed(0)
agent = Agent()
for _ in range(3):
    before = agent.critic_target.fc1.weight.detach().clone()
    agent.learn(torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 1), torch.randn(8, 4), torch.randn(8, 1))
    assert not torch.equal(before, agent.critic_target.fc1.weight)
print("OK")

# runtime: trains
"""One-step actor-critic: the advantage uses the detached value, and the value loss is part of the
backpropagated total together with an entropy bonus."""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs=4, actions=2):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(obs, 32), nn.Tanh())
        self.pi = nn.Linear(32, actions)
        self.v = nn.Linear(32, 1)

    def forward(self, s):
        h = self.shared(s)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


def update(agent, optimizer, states, rewards, next_states, gamma=0.99):
    dist, value = agent(states)
    actions = dist.sample()
    with torch.no_grad():
        _, next_value = agent(next_states)
        target = rewards + gamma * next_value
    advantage = target - value.detach()
    policy_loss = -(dist.log_prob(actions) * advantage).mean()
    value_loss = (target - value).pow(2).mean()
    loss = policy_loss + 0.5 * value_loss - 0.01 * dist.entropy().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(0)
agent = ActorCritic()
optimizer = torch.optim.Adam(agent.parameters(), lr=3e-3)
for episode in range(4):
    update(agent, optimizer, torch.randn(8, 4), torch.randn(8), torch.randn(8, 4))

# runtime: trains
"""A2C as DeepRL writes it: each step of the environment (`obs, reward, done, info = env.step(a)`)
appends the policy's log-probability and value, with their graphs, to the rollout; after the
rollout the rows are turned into columns with `map(lambda x: torch.cat(x), zip(*rows))` and one
backward() runs through every graph kept. The rollout is a loss, not a log: the environment's
step is not an optimizer's, and each column keeps its own values."""
import numpy as np
import torch
import torch.nn as nn


class Env:
    def reset(self):
        return np.random.randn(8, 4).astype(np.float32)

    def step(self, action):
        return np.random.randn(8, 4).astype(np.float32), np.random.rand(8), np.zeros(8), {}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.pi = nn.Linear(16, 2)
        self.v = nn.Linear(16, 1)

    def forward(self, obs):
        h = torch.tanh(self.body(torch.as_tensor(obs)))
        dist = torch.distributions.Categorical(logits=self.pi(h))
        action = dist.sample()
        return action, dist.log_prob(action).unsqueeze(-1), dist.entropy().unsqueeze(-1), self.v(h)


class Agent:
    def __init__(self):
        self.env = Env()
        self.network = Net()
        self.optimizer = torch.optim.RMSprop(self.network.parameters(), lr=1e-3)
        self.states = self.env.reset()

    def step(self):
        rollout = []
        states = self.states
        for _ in range(5):
            actions, log_probs, entropy, values = self.network(states)
            next_states, rewards, terminals, _ = self.env.step(actions.detach().numpy())
            rollout.append([log_probs, values, rewards, 1 - terminals, entropy])
            states = next_states
        self.states = states
        pending_value = self.network(states)[-1]
        rollout.append([None, pending_value, None, None, None])
        processed = [None] * (len(rollout) - 1)
        returns = pending_value.detach()
        for i in reversed(range(len(rollout) - 1)):
            log_prob, value, rewards, terminals, entropy = rollout[i]
            rewards = torch.tensor(rewards, dtype=torch.float32).unsqueeze(1)
            terminals = torch.tensor(terminals, dtype=torch.float32).unsqueeze(1)
            returns = rewards + 0.99 * terminals * returns
            advantages = returns - value.detach()
            processed[i] = [log_prob, value, returns, advantages, entropy]
        log_prob, value, returns, advantages, entropy = map(lambda x: torch.cat(x, dim=0), zip(*processed))
        policy_loss = -(log_prob * advantages).mean()
        value_loss = 0.5 * (returns - value).pow(2).mean()
        self.optimizer.zero_grad()
        (policy_loss - 0.01 * entropy.mean() + value_loss).backward()
        self.optimizer.step()


torch.manual_seed(0)
np.random.seed(0)
agent = Agent()
for it in range(4):
    agent.step()

"""A class whose `__new__` returns an instance of itself (a cached singleton over `super().__new__`),
and the same registry factory as a function: the agent clears its gradients before each backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    _instance = None

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __init__(self, lr=1e-3):
        self.lr = lr


class DiscretePolicy(nn.Module):
    def __init__(self, d_in, n_actions):
        super().__init__()
        self.body = nn.Linear(d_in, 32)
        self.pi = nn.Linear(32, n_actions)

    def forward(self, x):
        return F.log_softmax(self.pi(torch.relu(self.body(x))), dim=-1)


class Network:
    def __new__(cls, name, *args, **kwargs):
        return {"discrete_policy": DiscretePolicy}[name](*args, **kwargs)


class Agent:
    def __init__(self):
        self.network = Network("discrete_policy", 4, 3)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=Config().lr)

    def learn(self, states, actions, advantages):
        log_pi = self.network(states).gather(1, actions)
        loss = -(log_pi * advantages).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


agent = Agent()
for update in range(4):
    agent.learn(torch.randn(16, 4), torch.randint(0, 3, (16, 1)), torch.randn(16, 1))

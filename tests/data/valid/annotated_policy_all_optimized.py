# runtime: skip (a runner elsewhere builds the policy the class is given)
"""The valid form of bugs/annotated_policy_memory_not_optimized.py: the optimizer holds all of the
policy's parameters, whichever class the annotation names is given (checked with torch 2.13: the
GRU's weights change)."""
import torch.nn as nn
import torch.optim as optim


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)

    def act(self, obs):
        return self.net(obs)


class StudentRecurrent(Student):
    def __init__(self):
        super().__init__()
        self.memory = nn.GRU(4, 4)

    def act(self, obs):
        h, _ = self.memory(obs.unsqueeze(0))
        return self.net(h.squeeze(0))


class Distillation:
    policy: Student | StudentRecurrent

    def __init__(self, policy, lr=1e-3):
        self.policy = policy
        self.optimizer = optim.Adam(self.policy.parameters(), lr=lr)

    def update(self, obs, target):
        for _ in range(4):
            loss = (self.policy.act(obs) - target).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

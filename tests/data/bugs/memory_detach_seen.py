# runtime: no-update: agent.encoder
"""A loss built from a dict of lists that a method the engine does see fills: the detach in it is
found as before."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Agent:
    def __init__(self):
        self.encoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 1)
        self.optimizer = torch.optim.Adam([*self.encoder.parameters(), *self.head.parameters()], lr=1e-2)
        self.memory = {"pred": [], "target": []}

    def observe(self, x, y):
        feats = self.encoder(x).detach()  # <- GA101
        self.memory["pred"].append(self.head(feats))
        self.memory["target"].append(y)

    def update(self):
        loss = F.mse_loss(torch.cat(self.memory["pred"]), torch.cat(self.memory["target"]))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.memory = {"pred": [], "target": []}


torch.manual_seed(4)
agent = Agent()
for episode in range(2):
    for t in range(3):
        agent.observe(torch.randn(2, 4), torch.randn(2, 1))
    agent.update()

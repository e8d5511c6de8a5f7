# runtime: no-update: model.heads.1
"""Continual learning with one head per task in a ModuleList: the head for the second task is
appended after the optimizer was built, so it is in no param group."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHead(nn.Module):
    def __init__(self, inp=10, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(inp, hidden), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(hidden, 2)])
        self.hidden = hidden

    def add_task(self, classes):
        self.heads.append(nn.Linear(self.hidden, classes))  # <- GA108

    def forward(self, x, task):
        return self.heads[task](self.body(x))


def train_task(model, optimizer, task, classes, steps=3):
    for _ in range(steps):
        x, y = torch.randn(8, 10), torch.randint(0, classes, (8,))
        loss = F.cross_entropy(model(x, task), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
model = MultiHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_task(model, optimizer, 0, 2)
model.add_task(3)
train_task(model, optimizer, 1, 3)

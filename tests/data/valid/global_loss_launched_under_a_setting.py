# runtime: trains
"""The training function keeps its loss in a module-level name (`global last_loss`) for the
logging code, and runs when a setting read from the environment says so. Each iteration's
assignment replaces the name's value: the loss backpropagated is the one just computed, not one
joined with every earlier iteration's (whose graphs were freed)."""
import os

import torch
import torch.nn as nn

last_loss = None


def train_epoch(model, optimizer, loader):
    global last_loss
    total = 0.0
    for x in loader:
        last_loss = model(x).pow(2).mean()
        total += last_loss.detach()
        optimizer.zero_grad()
        last_loss.backward()
        optimizer.step()
    return total / len(loader)


def main():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [torch.randn(5, 4) for _ in range(3)]
    for epoch in range(2):
        print(epoch, float(train_epoch(model, optimizer, loader)))


if os.environ.get("TRAIN", "1"):
    main()

# runtime: trains
"""The loss is kept in a module-level name (`global last_loss`) and training runs when a setting
read from the environment says so; the gradients are never cleared, so each step applies the sum
of every earlier batch's gradients."""
import os

import torch
import torch.nn as nn

last_loss = None


def train_epoch(model, optimizer, loader):
    global last_loss
    for x in loader:
        last_loss = model(x).pow(2).mean()
        last_loss.backward()
        optimizer.step()  # <- GA201


def main():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [torch.randn(5, 4) for _ in range(3)]
    for epoch in range(2):
        train_epoch(model, optimizer, loader)


if os.environ.get("TRAIN", "1"):
    main()

# runtime: trains
# confidence: suspicious
"""Gradient accumulation over 4 micro-batches written into a train function that never divides
the loss: each step applies 4x the mean gradient (it trains, with a 4x larger step)."""
import torch
import torch.nn as nn


def train(model, optimizer, loader, accum_steps=4):
    model.train()
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()  # <- GA205
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
loader = [(torch.randn(4, 10), torch.randint(0, 4, (4,))) for _ in range(8)]
train(model, torch.optim.SGD(model.parameters(), lr=0.05), loader)

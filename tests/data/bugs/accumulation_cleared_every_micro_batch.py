# runtime: lost-grads
"""Gradient accumulation over `accum_steps` micro-batches: the loss is divided by the count and the
optimizer steps every `accum_steps` iterations, but the gradients are cleared at the end of every
iteration, outside the step's condition. Each clear drops what the earlier micro-batches wrote,
so each step applies a quarter of the last micro-batch's gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(accum_steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(12):
        x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
        model.zero_grad()  # <- GA202


if __name__ == "__main__":
    train()

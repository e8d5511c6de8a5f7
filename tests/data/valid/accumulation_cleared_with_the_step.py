# runtime: trains
"""Gradient accumulation over `accum_steps` micro-batches, the gradients cleared right after each
step under the same condition: every step applies the micro-batches it accumulated. (Clearing at
the top of the loop would drop them.)"""
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
            model.zero_grad()


if __name__ == "__main__":
    train()

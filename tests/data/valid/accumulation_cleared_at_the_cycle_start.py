# runtime: trains
"""As bugs/accumulation_cleared_with_the_step_before_backward.py, with the clear at the start of each
cycle (`i % accum_steps == 0`, another condition than the step's `(i + 1) % accum_steps == 0`): it
runs before the cycle's first micro-batch, and the step applies all of the cycle's gradients."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(accum_steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(12):
        x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
        if i % accum_steps == 0:
            optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()


if __name__ == "__main__":
    train()

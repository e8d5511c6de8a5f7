# runtime: lost-grads
"""Gradient accumulation over `accum_steps` micro-batches whose clear sits under the step's own
condition, at the top of the micro-batch (a DiffSynth-Studio style loop before its fix, written
without accelerate): on the micro-batch that steps, `zero_grad()` runs before that micro-batch's
backward() and drops what the earlier micro-batches accumulated, so every step applies the last
micro-batch's gradient only."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train(accum_steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(12):
        x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
        if (i + 1) % accum_steps == 0:
            optimizer.zero_grad()  # <- GA202
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()


if __name__ == "__main__":
    train()

# runtime: error: a leaf Variable that requires grad
"""A Reptile-style meta-learning loop whose inner adaptation updates the model's parameters in
place without torch.no_grad()."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def sample_task():
    a, phase = torch.rand(1) * 4 + 1, torch.rand(1) * 3
    x = torch.rand(10, 1) * 10 - 5
    return x, a * torch.sin(x + phase)


def adapt(model, x, y, inner_lr=0.01, steps=2):
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p -= inner_lr * p.grad  # <- GA111


torch.manual_seed(0)
meta = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
for it in range(3):
    fast = copy.deepcopy(meta)
    x, y = sample_task()
    adapt(fast, x, y)
    with torch.no_grad():
        for p, q in zip(meta.parameters(), fast.parameters()):
            p += 0.1 * (q - p)

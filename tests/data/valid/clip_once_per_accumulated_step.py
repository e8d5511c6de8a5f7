# runtime: trains
"""Gradient accumulation over four micro-batches, clipped once: inside the accumulation's `if`,
on the whole accumulated gradient, just before the step."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
grad_acc_steps = 4
for i in range(16):
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    loss = nn.functional.mse_loss(model(x), y) / grad_acc_steps
    loss.backward()
    if (i + 1) % grad_acc_steps == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        optimizer.zero_grad()

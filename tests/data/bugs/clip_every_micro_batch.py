# runtime: skip (the clip gives a wrongly scaled update, which no runtime check here tells from a right one)
# confidence: suspicious
"""Gradient accumulation over four micro-batches with the clip after every micro-batch's
backward (lingua's training loop before its fix): each clip rescales the partial sum gathered so
far, and the step applies a gradient that was never clipped as a whole. Suspicious: with an
accumulation of one micro-batch (a configuration's default) the clip is where it belongs."""
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
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # <- GA208
    if (i + 1) % grad_acc_steps == 0:
        optimizer.step()
        optimizer.zero_grad()

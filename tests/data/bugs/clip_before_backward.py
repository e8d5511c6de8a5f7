# runtime: trains
"""Gradient clipping placed right after zero_grad(), before backward(): it clips the cleared
gradients and the real ones are never clipped (it trains, unclipped)."""
import torch
import torch.nn as nn


def train_step(model, optimizer, x, y, max_norm=0.5):
    optimizer.zero_grad()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # <- GA208
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(4):
    x = torch.randn(8, 3)
    train_step(model, optimizer, x, 100 * x.sum(1, keepdim=True))

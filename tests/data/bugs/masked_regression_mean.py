# runtime: nonfinite
# confidence: suspicious
"""Regression with missing labels: the loss averages over labelled entries by dividing by the
mask's sum, and a batch with no labelled entry divides by zero."""
import torch
import torch.nn as nn


def masked_mse(pred, target, mask):
    return ((pred - target) ** 2 * mask).sum() / mask.sum()  # <- GA402


torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 3)
    mask = (torch.rand(5, 3) < 0.3).float()
    if step == 1:
        mask.zero_()
    loss = masked_mse(model(x), y, mask)
    opt.zero_grad()
    loss.backward()
    opt.step()

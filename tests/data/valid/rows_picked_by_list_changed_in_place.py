# runtime: trains
"""Rows of a sigmoid output picked with a list index and then scaled in place: advanced indexing
copies, so the in-place change writes the copy and the sigmoid's saved output is left alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    pred = model(torch.randn(3, 4)).sigmoid()
    picked = pred.view(-1, 4)[[0, 2, 5]]
    picked[..., 2:] *= 2.0
    keep = pred[pred.sum(-1) > 0]
    keep.add_(1.0)
    loss = F.mse_loss(picked, torch.rand(3, 4)) + keep.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

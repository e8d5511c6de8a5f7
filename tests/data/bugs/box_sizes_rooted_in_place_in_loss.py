# runtime: error: modified by an inplace operation
"""A YOLOv1-style box loss (after holocron's detector): the predicted boxes picked for the targets
get their width and height square-rooted in place, `sel[..., 2:] = sel[..., 2:].sqrt_()`. sqrt_
saved its output for backward, and writing the result back into `sel` changes that output again,
so the loss accumulated per image with `bbox_loss[idx] += ...` raises in backward. (Picking rows
with a list index copies them: the sigmoid output stays untouched.)"""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    pred = model(torch.randn(3, 4)).sigmoid()
    bbox_loss = torch.zeros(3)
    for idx in range(3):
        sel = pred[idx].view(-1, 4)[[0, 1]]
        sel[..., 2:] = sel[..., 2:].sqrt_()  # <- GA110
        bbox_loss[idx] += F.mse_loss(sel, torch.rand(2, 4))
    loss = bbox_loss.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: trains
"""The weighted mean of a per-pixel loss over the text pixels, after an early return for a batch
whose score map sums to less than 1 (no text): past that test the sum is at least 1, so the
division is safe. Without the test the division is GA402 (tests/data/bugs/weighted_mean_by_batch_mask.py)."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def geo_loss(pred_geo, gt_geo, gt_score):
    if torch.sum(gt_score) < 1:
        return torch.sum(pred_geo) * 0
    loss_map = (pred_geo - gt_geo).abs()
    return torch.sum(loss_map * gt_score) / torch.sum(gt_score)


torch.manual_seed(0)
images = torch.randn(4, 3, 8, 8)
scores = (torch.rand(4, 1, 8, 8) > 0.7).float()
scores[1] = 0
geometry = torch.rand(4, 1, 8, 8)
loader = DataLoader(TensorDataset(images, scores, geometry), batch_size=1)

net = nn.Conv2d(3, 1, 3, padding=1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
for image, gt_score, gt_geo in loader:
    loss = geo_loss(net(image), gt_geo, gt_score)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# runtime: nonfinite
# confidence: suspicious
"""A text detector's geometry loss averaged over the text pixels: the per-pixel loss is weighted
by the ground-truth score map that the data loader gives and divided by that map's sum. A crop
with no text region has an all-zero score map, so the division is 0/0: the loss is NaN and so is
every gradient (the weights reach the numerator too). Nothing in the code bounds the sum away from
0; the engine knows nothing of the batch's values."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.randn(4, 3, 8, 8)
scores = (torch.rand(4, 1, 8, 8) > 0.7).float()
scores[1] = 0  # a crop without text
geometry = torch.rand(4, 1, 8, 8)
loader = DataLoader(TensorDataset(images, scores, geometry), batch_size=1)

net = nn.Conv2d(3, 1, 3, padding=1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
for image, gt_score, gt_geo in loader:
    pred_geo = net(image)
    loss_map = (pred_geo - gt_geo).abs()
    loss = torch.sum(loss_map * gt_score) / torch.sum(gt_score)  # <- GA402
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

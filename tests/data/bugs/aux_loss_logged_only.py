# runtime: no-update: model.depth_head
"""Segmentation with an auxiliary depth head: the depth loss is computed and logged, but only the
segmentation loss is backpropagated, so the depth head never trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SegDepthNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.seg_head = nn.Conv2d(8, classes, 1)
        self.depth_head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        f = self.encoder(x)
        return self.seg_head(f), self.depth_head(f)


def train_step(model, optimizer, batch, log):
    img, seg, depth = batch
    seg_logits, depth_pred = model(img)
    seg_loss = F.cross_entropy(seg_logits, seg)
    depth_loss = F.l1_loss(depth_pred, depth)  # <- GA209
    optimizer.zero_grad()
    seg_loss.backward()
    optimizer.step()
    log.append({"seg": seg_loss.item(), "depth": depth_loss.item()})


torch.manual_seed(0)
model = SegDepthNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
log = []
for it in range(3):
    batch = (torch.randn(2, 3, 8, 8), torch.randint(0, 3, (2, 8, 8)), torch.rand(2, 1, 8, 8))
    train_step(model, optimizer, batch, log)
print(log[-1])

# runtime: error: does not require grad
"""Crowd counting: the density map is thresholded and the cells counted, and the count regressed
against the label; the comparison carries no gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DensityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1), nn.Sigmoid())

    def forward(self, img):
        return self.features(img)


def count_people(density, threshold=0.5):
    occupied = density > threshold  # <- GA112
    return occupied.flatten(1).sum(dim=1).float()


def train_epoch(model, optimizer, loader):
    for img, count in loader:
        pred = count_people(model(img))
        loss = F.mse_loss(pred, count)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
net = DensityNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
loader = [(torch.rand(4, 1, 16, 16), torch.randint(0, 40, (4,)).float()) for _ in range(3)]
for epoch in range(2):
    train_epoch(net, opt, loader)

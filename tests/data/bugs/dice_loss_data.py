# runtime: error: does not require grad
"""A segmentation loss helper that reads the prediction through `.data` (copied from an old
metric function): the loss has no graph and backward() raises."""
import torch
import torch.nn as nn


def dice_loss(logits, target, smooth=1.0):
    probs = torch.sigmoid(logits.data)  # <- GA101
    inter = (probs * target).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + smooth) / (union + smooth)).mean()


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.up = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(4, 1, 3, padding=1))

    def forward(self, x):
        return self.up(self.down(x))


torch.manual_seed(0)
net = TinyUNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(2):
    img = torch.randn(2, 1, 16, 16)
    mask = (torch.rand(2, 1, 16, 16) > 0.5).float()
    loss = dice_loss(net(img), mask)
    opt.zero_grad()
    loss.backward()
    opt.step()

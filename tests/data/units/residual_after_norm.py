"""Residual blocks whose in-place adds land on tensors no op saved: the output of a batch norm (it
saves its input) and a fresh sum; the final in-place ReLU saves its own result and nothing changes
it afterwards. Backward runs. No training step in this file uses them."""
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(d, d, 3, padding=1, bias=False), nn.BatchNorm2d(d)
        self.conv2, self.bn2 = nn.Conv2d(d, d, 3, padding=1, bias=False), nn.BatchNorm2d(d)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return self.relu(out)


class FusePaths(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a, self.b = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        out = self.a(x) + self.b(x)
        out *= 0.5
        out[:, 0] = 0.0
        return out

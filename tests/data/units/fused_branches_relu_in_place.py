"""A multi-branch stage in HRNet's style: each branch ends in an in-place ReLU, the branches are
fused by out-of-place sums, and the stage then applies its own in-place ReLU to each fused output
in a loop over a list (`x_fused[i] = self.relu(x_fused[i])`). Each element is a fresh sum, changed
once: nothing saved is overwritten, and backward runs."""
import torch.nn as nn


class Branch(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.conv(x))


class Stage(nn.Module):
    def __init__(self, c, n=2):
        super().__init__()
        self.n = n
        self.branches = nn.ModuleList([Branch(c) for _ in range(n)])
        self.fuse = nn.ModuleList([nn.Conv2d(c, c, 1) for _ in range(n)])
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        x = [branch(x) for branch in self.branches]
        x_fused = []
        for i in range(self.n):
            x_fused.append(x[0] + self.fuse[i](x[1]))
        for i in range(self.n):
            x_fused[i] = self.relu(x_fused[i])
        return x_fused[0] + x_fused[1]

"""An encoder in RPNet's style: each stage is an `nn.Sequential` that opens with
`nn.LeakyReLU(0.2, inplace=True)`, and the first stage ends with a block whose last op is a ReLU,
which saves its output for backward. The second stage's in-place LeakyReLU overwrites that output:
any backward through the encoder raises "modified by an inplace operation". No training step in
this file uses it."""
import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x) + x)


class Encoder(nn.Module):
    def __init__(self, c_in):
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv1d(c_in, 8, 4, stride=2, padding=1), nn.BatchNorm1d(8), ResBlock(8))
        self.e2 = nn.Sequential(nn.LeakyReLU(0.2, inplace=True), nn.Conv1d(8, 16, 4, stride=2, padding=1))
        self.e2add = nn.Sequential(nn.Conv1d(16, 16, 3, padding=1), nn.BatchNorm1d(16))
        self.e3 = nn.Sequential(nn.LeakyReLU(0.2, inplace=True), nn.Conv1d(16, 16, 3, padding=1))

    def forward(self, x):
        en1 = self.e1(x)
        en2 = self.e2(en1)  # <- GA110
        en2add = self.e2add(en2)
        en3 = self.e3(en2add)
        return torch.cat([en1.mean(-1), en2add.mean(-1), en3.mean(-1)], 1)

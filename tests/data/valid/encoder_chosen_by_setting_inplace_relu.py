# runtime: trains
"""An encoder picked by a setting (`if n > 1: self.encoder = MultiImageResNet() else: self.encoder =
ResNet()`) and used part by part in forward (`self.encoder.relu(self.encoder.bn1(...))`, an
in-place ReLU): only one of the two encoders runs, so one ReLU changes what the other saved
never happens."""
import os

import torch
import torch.nn as nn


class A(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)


class B(A):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(6, 8, 3, bias=False)


class Encoder(nn.Module):
    def __init__(self, n):
        super().__init__()
        if n > 1:
            self.encoder = B()
        else:
            self.encoder = A()

    def forward(self, x):
        x = self.encoder.conv1(x)
        x = self.encoder.bn1(x)
        return self.encoder.relu(x)


model = Encoder(int(os.environ.get("INPUT_IMAGES", "1")))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(2, 3, 8, 8)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

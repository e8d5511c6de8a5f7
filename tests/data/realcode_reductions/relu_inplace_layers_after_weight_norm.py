# reduction-of: wavenet_vocoder@a35fff76ea36 wavenet_vocoder/wavenet.py:209 GA110
# false: GA110
"""A WaveNet-style net: residual convolutions whose skip outputs are summed into `skips` with `+=`
and scaled with `*=`, then a head kept as a ModuleList `[ReLU(inplace=True), Conv1d 1x1,
ReLU(inplace=True), Conv1d 1x1]` and applied one module at a time (`for f in layers: x = f(x)`).

The real code (wavenet_vocoder) builds each 1x1 convolution of the head through a helper that
wraps `nn.Conv1d` in `nn.utils.weight_norm`, and trains the net on cross-entropy.

False finding: GA110 confirmed at `x = f(x)` of the head loop: "in-place change of a tensor that
`relu` saved for backward". Each in-place ReLU acts on a fresh tensor: the first on the scaled
skip sum, the second on the output of the weight-normed convolution between them, which the
convolution does not save. The engine mis-modelled the weight_norm-wrapped convolution and saw both
ReLUs act on one tensor.

Verified with torch 2.13 (CPU): backward runs without the "modified by an inplace operation" error,
the first convolution and both head convolutions (their weight_g and weight_v) get gradients,
and the first convolution changes. Prints OK.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv1x1(cin, cout):
    return nn.utils.weight_norm(nn.Conv1d(cin, cout, 1))


class Net(nn.Module):
    def __init__(self, channels=4, layers=3, out_channels=3):
        super().__init__()
        self.first_conv = conv1x1(1, channels)
        self.conv_layers = nn.ModuleList([nn.Conv1d(channels, channels, 1) for _ in range(layers)])
        self.last_conv_layers = nn.ModuleList([
            nn.ReLU(inplace=True),
            conv1x1(channels, channels),
            nn.ReLU(inplace=True),
            conv1x1(channels, out_channels),
        ])

    def forward(self, x):
        x = self.first_conv(x)
        skips = 0
        for f in self.conv_layers:
            h = torch.tanh(f(x))
            x = (x + h) * math.sqrt(0.5)
            skips += h
        skips *= math.sqrt(1.0 / len(self.conv_layers))
        x = skips
        for f in self.last_conv_layers:
            x = f(x)
        return x


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(2, 1, 16), torch.randint(0, 3, (2, 16))
before = model.first_conv.weight_v.detach().clone()
optimizer.zero_grad()
loss = F.cross_entropy(model(x), y)
loss.backward()
assert all(p.grad is not None for p in model.parameters())
optimizer.step()
assert not torch.equal(before, model.first_conv.weight_v)
print("OK")

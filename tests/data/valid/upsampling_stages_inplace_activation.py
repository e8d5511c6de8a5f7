# runtime: trains
"""A HiFi-GAN-style vocoder: each upsampling stage activates its input in place
(`x = leaky_relu_(x)`) before the transposed convolution saves it, and after the stages the last
stage's output is activated in place again. After the loop `x` is the last stage's new tensor,
which no stage saved (with no stage at all, the first tensor, which nothing saved either); the
number of stages comes from the environment."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, padding=1)

    def forward(self, x):
        return x + self.conv(F.leaky_relu(x, 0.1))


class Vocoder(nn.Module):
    def __init__(self, rates, kernels=2):
        super().__init__()
        self.kernels = kernels
        self.pre = nn.Conv1d(4, 8, 3, padding=1)
        self.ups = nn.ModuleList()
        self.noise = nn.ModuleList()
        ch = 8
        for u in rates:
            self.ups.append(nn.ConvTranspose1d(ch, ch // 2, 2 * u, u, padding=u // 2))
            self.noise.append(nn.Conv1d(1, ch // 2, 1))
            ch //= 2
        self.blocks = nn.ModuleList([Block(8 // 2 ** (i + 1)) for i in range(len(rates)) for _ in range(kernels)])
        self.post = nn.Conv1d(ch, 1, 7, padding=3, bias=False)

    def forward(self, x, excitation):
        x = self.pre(x)
        for i, (up, noise) in enumerate(zip(self.ups, self.noise)):
            x = F.leaky_relu_(x, 0.1)
            x = up(x)
            x += noise(excitation[i])
            blocks = self.blocks[i * self.kernels : (i + 1) * self.kernels]
            x = sum(block(x) for block in blocks) / len(blocks)
        x = F.leaky_relu_(x)
        return torch.tanh_(self.post(x))


rates = tuple(int(r) for r in os.environ.get("RATES", "2,2").split(","))
model = Vocoder(rates)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(2, 4, 8)
    excitation = [torch.randn(2, 1, 16), torch.randn(2, 1, 32)]
    loss = model(x, excitation).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

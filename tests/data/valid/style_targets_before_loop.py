# runtime: trains
"""Style transfer: the style image's Gram matrices are computed once, before training, from a
frozen feature extractor that returns a namedtuple; every iteration's loss compares against them."""
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

Features = namedtuple("Features", ["low", "high"])


class Extractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.low = nn.Conv1d(3, 4, 3, padding=1)
        self.high = nn.Conv1d(4, 4, 3, padding=1)
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, x):
        low = self.low(x)
        return Features(low, self.high(low))


def gram(y):
    b, ch, n = y.size()
    return y.bmm(y.transpose(1, 2)) / (ch * n)


torch.manual_seed(1)
features = Extractor()
transformer = nn.Conv1d(3, 3, 3, padding=1)
optimizer = torch.optim.Adam(transformer.parameters(), lr=1e-2)
style = torch.randn(2, 3, 16)
style_grams = [gram(f) for f in features(style)]
running = 0.0
for step in range(3):
    x = torch.randn(2, 3, 16)
    optimizer.zero_grad()
    loss = 0.0
    for f, g in zip(features(transformer(x)), style_grams):
        loss += F.mse_loss(gram(f), g)
    loss.backward()
    optimizer.step()
    running += loss.item()

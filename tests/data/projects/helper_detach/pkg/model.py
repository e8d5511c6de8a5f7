import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, d=6, width=12):
        super().__init__()
        self.proj = nn.Linear(d, width)
        self.mix = nn.Sequential(nn.GELU(), nn.Linear(width, width))

    def forward(self, x):
        return self.mix(self.proj(x))

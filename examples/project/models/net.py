"""A small tabular classifier: an MLP encoder followed by a linear head."""

import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, in_dim, hidden, depth=2, dropout=0.1):
        super().__init__()
        layers = []
        dim = in_dim
        for _ in range(depth):
            layers += [nn.Linear(dim, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout)]
            dim = hidden
        self.body = nn.Sequential(*layers)
        self.out_dim = hidden

    def forward(self, x):
        return self.body(x)


class Net(nn.Module):
    def __init__(self, in_dim, num_classes, hidden=64, depth=2):
        super().__init__()
        self.encoder = Encoder(in_dim, hidden, depth)
        self.head = nn.Linear(self.encoder.out_dim, num_classes)

    def forward(self, x):
        return self.head(self.encoder(x))

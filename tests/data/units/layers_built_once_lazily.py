"""Layers built on the first forward, when the input's size is known, and kept (CUT's projection
heads, `if key not in self.mlps:`; PyG's `if not self.initialized:`): built once, registered with
`add_module`, not anew at each call. Whether an optimizer holds them depends on when it is built,
which the module alone does not say: nothing is reported. No training step in this file uses it."""
import torch.nn as nn


class LazyHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlps = {}

    def create_mlp(self, x):
        return nn.Sequential(nn.Conv2d(x.shape[1], 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 1))

    def forward(self, x):
        key = str(x.shape[1])
        if key not in self.mlps:
            self.mlps[key] = self.create_mlp(x)
            self.add_module("child_" + key, self.mlps[key])
        return self.mlps[key](x)


class LazyProjection(nn.Module):
    def __init__(self, out_channels):
        super().__init__()
        self.out_channels = out_channels
        self.out_lin = None

    def forward(self, x):
        if self.out_lin is None:
            self.out_lin = nn.Linear(x.size(-1), self.out_channels)
        return self.out_lin(x)

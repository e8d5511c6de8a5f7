import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.layer = nn.Linear(n_in, n_out)

    def forward(self, x):
        return self.layer(x)


class Merge(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.previous_modules = []

    def set_previous_modules(self, modules):
        self.previous_modules = modules if modules else []
        self.total_in = 0
        for module in self.previous_modules:
            self.total_in += module.layer.in_features

    def forward(self, x):
        return x



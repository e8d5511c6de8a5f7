import torch
import torch.nn as nn


class StatLayer(nn.Module):
    """A layer that keeps a detached copy of its last input for statistics (as a growing network
    does to compute its next expansion): the copy is data, not a weight."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.layer = nn.Linear(n_in, n_out)
        self.store_input = True
        self._input = None

    def __setattr__(self, key, value):
        if key == "weight":
            self.layer.weight = value
        else:
            torch.nn.Module.__setattr__(self, key, value)

    def forward(self, x):
        if self.store_input:
            self._input = x.detach()
        return self.layer(x)

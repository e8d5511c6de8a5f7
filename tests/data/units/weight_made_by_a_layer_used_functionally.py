"""EvolveGCN-O's layer as its fix writes it: the weight evolved by the LSTM is used as it is
(`F.linear(x, W)`), so the gradient reaches the LSTM; a parameter made in `__init__` from a fixed
initial value is an ordinary weight. No training step in this file uses it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EvolveLinear(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.recurrent_layer = nn.LSTM(input_size=dim, hidden_size=dim, num_layers=1)
        self.initial_weight = nn.Parameter(torch.randn(dim, dim) / dim**0.5)

    def forward(self, x):
        W, _ = self.recurrent_layer(self.initial_weight[:, None, :])
        return F.linear(x, W.squeeze(1))

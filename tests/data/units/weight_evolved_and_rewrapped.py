"""EvolveGCN-O's layer in PyTorch Geometric Temporal: an LSTM evolves the layer's weight at every
forward and the result is wrapped in `nn.Parameter(...)`, a new leaf without the LSTM's history,
so the LSTM never gets a gradient; the new parameter, made at every call, is one no optimizer
holds. No training step in this file uses it (tests/data/bugs has the trained version)."""
import torch.nn as nn


class EvolveLinear(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.recurrent_layer = nn.LSTM(input_size=dim, hidden_size=dim, num_layers=1)
        self.conv_layer = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        W = self.conv_layer.weight[None, :, :]
        W, _ = self.recurrent_layer(W)
        self.conv_layer.weight = nn.Parameter(W.squeeze(0))  # <- GA104, GA108
        return self.conv_layer(x)

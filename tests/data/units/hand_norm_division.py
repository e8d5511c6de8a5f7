"""A vector-neuron batch norm: the norm of each 3-vector is written by hand and the vectors are
divided by it. Where a vector is exactly zero (a point at the origin, a zeroed feature) the norm is
0: the forward gives NaN there, and the root's gradient is infinite. No training step in this file
uses it."""
import torch
import torch.nn as nn


class VectorBatchNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)

    def forward(self, x):
        # x: [batch, channels, 3, points]
        norm = torch.sqrt((x * x).sum(2))  # <- GA403
        norm_bn = self.bn(norm)
        return x / norm.unsqueeze(2) * norm_bn.unsqueeze(2)  # <- GA402

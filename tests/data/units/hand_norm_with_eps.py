"""The same vector batch norm with an eps inside the root: finite value and gradient at a zero
vector."""
import torch
import torch.nn as nn


class VectorBatchNorm(nn.Module):
    def __init__(self, channels, eps=1e-6):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)
        self.eps = eps

    def forward(self, x):
        norm = torch.sqrt((x * x).sum(2) + self.eps)
        norm_bn = self.bn(norm)
        return x / norm.unsqueeze(2) * norm_bn.unsqueeze(2)

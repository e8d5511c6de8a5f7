# runtime: error: modified by an inplace operation
"""Sparse gating: small sigmoid gates are zeroed with an in-place masked assignment, but sigmoid
saved its output for backward."""
import torch
import torch.nn as nn


class SparseGate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        g[g < 0.1] = 0.0  # <- GA110
        return g * self.proj(x)


torch.manual_seed(0)
model = nn.Sequential(SparseGate(6), nn.Linear(6, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: error: modified by an inplace operation
"""A transformer-style MLP with a configurable dropout rate whose default is 0.0. `F.dropout` with
p=0 gives back its input itself, so the in-place residual add writes the ReLU's output, which ReLU
saved for backward: `loss.backward()` raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d, dropout=0.0):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.dropout = dropout

    def forward(self, x):
        h = F.dropout(F.relu(self.fc(x)), p=self.dropout, training=self.training)
        h += x  # <- GA110
        return h


model = MLP(8)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: error: modified by an inplace operation
"""A gated block scales its hidden state in place by the gate, then shifts the gate in place for a
later use: the in-place mul_ saved the gate for backward, and the output reaches the gate only
through h."""
import torch
import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)
        g = torch.sigmoid(self.gate(x))
        h.mul_(g)
        g.add_(1.0)  # <- GA110
        return h


torch.manual_seed(3)
model = GatedBlock()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(16, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: trains
"""Look-alike of bugs/gated_residual_mul_inplace.py: the hidden state is scaled in place by the gate,
and the gate is shifted out of place, so what mul_ saved stays intact."""
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
        h.add_(1.0)
        g = g + 1.0
        return h + g


torch.manual_seed(3)
model = GatedBlock()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(16, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: error: modified by an inplace operation
"""A bounded periodic feature: tan of a projection, clipped in place before the head."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Periodic(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        h = torch.tan(self.proj(x))
        h.clamp_(-3.0, 3.0)  # <- GA110
        return self.head(h)


torch.manual_seed(3)
model = Periodic()
opt = torch.optim.SGD(model.parameters(), lr=1e-2)
for _ in range(2):
    loss = F.cross_entropy(model(torch.randn(6, 8)), torch.randint(0, 2, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

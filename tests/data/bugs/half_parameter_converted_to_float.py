# runtime: no-update: m.scale
# confidence: suspicious
"""A learned per-channel scale made in half precision and converted with `.float()` in the same
statement: the conversion copies, so the module keeps a float32 non-leaf that `.parameters()`
never lists, and the scale stays what it was."""
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.scale = nn.Parameter(torch.ones(d, dtype=torch.float16)).float()  # <- GA113

    def forward(self, x):
        return self.lin(x) * self.scale


torch.manual_seed(0)
m = Scaled()
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
for it in range(3):
    loss = m(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

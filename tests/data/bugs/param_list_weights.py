# runtime: no-update: model.scales
"""A mixture model keeps its per-component scale parameters in a Python list of nn.Parameter:
they are not registered, so model.parameters() does not yield them."""
import torch
import torch.nn as nn


class Mixture(nn.Module):
    def __init__(self, k=3, dim=4):
        super().__init__()
        self.logits = nn.Linear(dim, k)
        self.scales = [nn.Parameter(torch.ones(1)) for _ in range(k)]  # <- GA109

    def forward(self, x):
        w = torch.softmax(self.logits(x), dim=-1)
        s = torch.cat(self.scales)
        return (w * s).sum(-1)


torch.manual_seed(0)
model = Mixture()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(4):
    x, y = torch.randn(16, 4), torch.rand(16) * 3
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

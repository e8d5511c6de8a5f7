# runtime: nonfinite
# confidence: suspicious
"""Metric learning with embeddings normalised by hand after a ReLU projection: a row that the ReLU
zeroes entirely is divided by a zero norm."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Embedder(nn.Module):
    def __init__(self, inp=6, dim=2):
        super().__init__()
        self.proj = nn.Linear(inp, dim)

    def forward(self, x):
        e = F.relu(self.proj(x))
        return e / e.norm(dim=1, keepdim=True)  # <- GA402


def proxy_loss(emb, proxies, labels, scale=8.0):
    sims = emb @ F.normalize(proxies, dim=1).t()
    return F.cross_entropy(scale * sims, labels)


torch.manual_seed(0)
model = Embedder()
proxies = nn.Parameter(torch.randn(3, 2))
opt = torch.optim.Adam(list(model.parameters()) + [proxies], lr=1e-2)
for step in range(4):
    x, labels = torch.randn(32, 6), torch.randint(0, 3, (32,))
    loss = proxy_loss(model(x), proxies, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

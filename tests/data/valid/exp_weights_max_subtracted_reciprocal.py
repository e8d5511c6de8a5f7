# runtime: trains
"""Linear attention normalised with a reciprocal: the keys are exponentiated after subtracting
their maximum (each is at most 1), so neither the weighted sum nor the normaliser `1.0 / (sum +
eps)` can overflow."""
import torch
import torch.nn as nn


class LinearAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.softmax(dim=-1)
        k = torch.exp(k - k.amax(dim=1, keepdim=True))
        context = torch.einsum("bnd,bne->bde", k, v)
        normaliser = 1.0 / (torch.einsum("bnd,bd->bn", q, k.sum(dim=1)) + 1e-6)
        return torch.einsum("bnd,bde->bne", q, context) * normaliser.unsqueeze(-1)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), LinearAttention(16), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    loss = model(20 * torch.randn(2, 5, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

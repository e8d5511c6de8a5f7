# runtime: nonfinite
# confidence: suspicious
"""Self-attention written by hand with the softmax as exp/sum and no max subtraction or 1/sqrt(d)
scale: large scores overflow exp to inf and the weights become NaN."""
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1)
        weights = torch.exp(scores)  # <- GA404
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return self.out(weights @ v)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 32), SelfAttention(32), nn.Flatten(), nn.Linear(5 * 32, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = 20 * torch.randn(2, 5, 4)
    y = torch.randn(2, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: nonfinite
# confidence: suspicious
"""An RWKV-style time mix chosen by the model's configuration (`if config.model_type == ...` in the
block's __init__, the configuration's fields set from keyword arguments): the keys are
exponentiated raw, weighted by the values, and divided by their running sum. Large keys overflow
exp to inf and inf/inf is NaN."""
import torch
import torch.nn as nn


class TimeMix(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.receptance = nn.Linear(dim, dim)

    def forward(self, x):
        k = torch.exp(self.key(x))  # <- GA404
        v = self.value(x)
        sum_k = torch.cumsum(k, dim=1)
        wkv = torch.cumsum(k * v, dim=1)
        return torch.sigmoid(self.receptance(x)) * wkv / sum_k


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)


class Config:
    def __init__(self, dim, **kwargs):
        self.dim = dim
        for k, v in kwargs.items():
            setattr(self, k, v)


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln = nn.LayerNorm(config.dim)
        if config.model_type == "RWKV":
            self.attn = TimeMix(config.dim)
        elif config.model_type == "MHA":
            self.attn = Attention(config.dim)

    def forward(self, x):
        return x + self.attn(self.ln(x))


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), Block(Config(16, model_type="RWKV")), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
with torch.no_grad():
    model[1].attn.key.weight.mul_(60.0)
for step in range(3):
    x = torch.randn(2, 5, 4)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

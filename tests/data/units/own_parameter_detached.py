"""A learned position embedding added to the tokens through `.clone().detach()`: whatever trains
this module, `pos_embed` gets no gradient from its forward and keeps its initial values (the
checked code runs no training step). A buffer detached the same way, a parameter used detached and
also directly, and a codebook updated by hand in the forward (an exponential moving average) are
not flagged."""
import torch
import torch.nn as nn


class Tokens(nn.Module):
    def __init__(self, n=5, d=8):
        super().__init__()
        self.proj = nn.Linear(4, d)
        self.pos_embed = nn.Parameter(torch.zeros(1, n, d))
        nn.init.normal_(self.pos_embed, std=0.02)
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        x = self.proj(x)
        x = x + self.pos_embed.type_as(x).clone().detach()  # <- GA101
        return self.head(x.mean(1))


class Kept(nn.Module):
    def __init__(self, n=5, d=8):
        super().__init__()
        self.proj = nn.Linear(4, d)
        self.register_buffer("table", torch.randn(1, n, d))
        self.scale = nn.Parameter(torch.ones(d))

    def forward(self, x):
        h = self.proj(x) + self.table.detach()
        gate = torch.sigmoid(self.scale.detach()) * self.scale
        return (h * gate).mean(1)


class EmaCodebook(nn.Module):
    def __init__(self, k=16, d=8, decay=0.99):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(k, d), requires_grad=True)
        self.decay = decay

    def forward(self, z):
        dist = torch.cdist(z, self.embed.detach())
        idx = dist.argmin(-1)
        q = self.embed.detach()[idx]
        if self.training:
            onehot = nn.functional.one_hot(idx, self.embed.shape[0]).float()
            mean = onehot.t() @ z / onehot.sum(0).clamp_min(1.0)[:, None]
            self.embed.data.mul_(self.decay).add_((1 - self.decay) * mean.detach())
        return z + (q - z).detach()

# runtime: error: modified by an inplace operation
"""A token mixer written with einops: patches are flattened with `rearrange`, a ReLU feed-forward
runs over them, and the dropout after the ReLU is in place. ReLU saved its output for backward and
the dropout overwrites it, so `loss.backward()` raises. einops is plain reshaping over torch ops:
the graph and what it saved go through `rearrange` unchanged."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, reduce


class Mixer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc1 = nn.Linear(c, 2 * c)
        self.fc2 = nn.Linear(2 * c, c)
        self.drop = nn.Dropout(0.1, inplace=True)

    def forward(self, x):
        h = x.shape[2]
        t = rearrange(x, "b c h w -> b (h w) c")
        t = self.drop(F.relu(self.fc1(t)))  # <- GA110
        return rearrange(self.fc2(t), "b (h w) c -> b c h w", h=h)


model = Mixer(4)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(2, 4, 6, 6)
    loss = reduce(model(x), "b c h w -> b", "mean").pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

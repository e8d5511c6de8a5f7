# runtime: error: modified by an inplace operation
"""Tokens from a ReLU are repeated per query with einops' `repeat`, and the first query is zeroed
in place. `repeat` to a new, separate axis is an `expand`: a view of the ReLU's output, which ReLU
saved for backward, so the write changes the saved tensor and `loss.backward()` raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat


class QueryPool(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.n = n

    def forward(self, x):
        t = F.relu(self.proj(x))
        q = repeat(t, "b c -> b n c", n=self.n)
        q[:, 0] = 0  # <- GA110
        return rearrange(q, "b n c -> b (n c)")


model = QueryPool(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

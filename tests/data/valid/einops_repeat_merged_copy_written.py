# runtime: trains
"""As bugs/einops_repeat_view_written.py, but the repeats are merged with the channels
(`b c -> b (n c)`): torch cannot give that as a view of the ReLU's output, so `repeat` copies,
and zeroing part of the copy in place leaves the saved output alone."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import repeat


class QueryPool(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.n = n

    def forward(self, x):
        t = F.relu(self.proj(x))
        q = repeat(t, "b c -> b (n c)", n=self.n)
        q[:, 0] = 0
        return q


model = QueryPool(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

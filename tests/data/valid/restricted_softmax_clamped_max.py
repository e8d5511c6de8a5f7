# runtime: trains
"""A restricted softmax (PyTorch Geometric's DNAConv): the maximum it subtracts is first clamped at
0 and kept in a name, `src_max = clamp(src.max(dim)[0], min=0)`, so `(src - src_max).exp()` is at
most 1 and the extra term `exp(margin - src_max)` at most `exp(margin)`: nothing overflows."""
import torch
import torch.nn as nn


def restricted_softmax(src, dim=-1, margin=0.0):
    src_max = torch.clamp(src.max(dim=dim, keepdim=True)[0], min=0.0)
    out = (src - src_max).exp()
    out = out / (out.sum(dim=dim, keepdim=True) + (margin - src_max).exp())
    return out


lin = nn.Linear(4, 5)
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
for step in range(3):
    w = restricted_softmax(lin(torch.randn(3, 4)))
    loss = (w * torch.randn(3, 5)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()

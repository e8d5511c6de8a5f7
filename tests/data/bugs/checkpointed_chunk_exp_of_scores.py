# runtime: nonfinite
# confidence: suspicious
"""Memory-efficient attention in chunks (after lucidrains' first release): each chunk runs under
activation checkpointing, `checkpoint(summarize, q, k, v)`, and exponentiates the raw scores
without subtracting their maximum; the chunks' sums then normalise the weighted values. Large
scores overflow exp to inf and the normalisation gives inf/inf = NaN. The checkpoint recomputes
the chunk in backward, with the same values and gradients as calling it."""
from functools import partial

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


def summarize(q, k, v):
    weight = torch.einsum("b i d, b j d -> b i j", q, k)
    exp_weight = weight.exp()  # <- GA404
    return exp_weight.sum(dim=-1), torch.einsum("b i j, b j d -> b i d", exp_weight, v)


checkpointed = partial(checkpoint, summarize, use_reentrant=False)


def attend(q, k, v):
    sums, values = checkpointed(q, k, v)
    return values / (sums.unsqueeze(-1) + 1e-8)


proj = nn.Linear(8, 24)
opt = torch.optim.Adam(proj.parameters(), lr=1e-3)
for _ in range(3):
    q, k, v = proj(torch.randn(2, 5, 8) * 30).chunk(3, dim=-1)
    loss = attend(q, k, v).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

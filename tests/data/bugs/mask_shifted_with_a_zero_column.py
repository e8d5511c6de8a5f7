# runtime: nonfinite
# confidence: suspicious
"""A captioning loss counts each sampled word up to the end token by shifting the `seq > 0` mask
right, but the column put first is zeros, not ones (or the column of ones is joined along the
batch dim, as extra rows): a sample whose first word is the end token has an all-zero row, and
the per-sample mean divides 0 by 0."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def shifted_mean(x, seq):
    mask = (seq > 0).float()
    mask = torch.cat([mask.new_zeros(mask.size(0), 1), mask[:, :-1]], 1)
    return (x * mask).sum(1) / mask.sum(1)  # <- GA402


def padded_rows_mean(x, seq):
    mask = (seq > 0).float()
    mask = torch.cat([mask.new_ones(1, mask.size(1)), mask], 0)[1:]
    return (x * mask).sum(1) / mask.sum(1)  # <- GA402


torch.manual_seed(0)
emb = nn.Embedding(10, 8)
head = nn.Linear(8, 10)
opt = torch.optim.Adam([*emb.parameters(), *head.parameters()], lr=1e-2)
seq = torch.randint(1, 10, (4, 6))
seq[1] = 0  # a sample that ends at once
for it in range(3):
    logp = F.log_softmax(head(emb(seq)), dim=-1).mean(-1)
    loss = -(shifted_mean(logp, seq).mean() + padded_rows_mean(logp, seq).mean())
    opt.zero_grad()
    loss.backward()
    opt.step()

# reduction-of: few-shot@672de83a853c few_shot/utils.py:66 GA403
# false: GA403
"""Matching networks: the support and query embeddings are a ReLU encoder's outputs, or (with full
context embeddings) those outputs passed through an LSTM cell with a skip connection; the cosine
distance normalises each row by a hand-written norm, `x / (x.pow(2).sum(1, keepdim=True).sqrt() + eps)`.

The real code (few-shot's `pairwise_distances(queries, support, 'cosine')` from
`matching_net_episode`): `embeddings = model.encoder(x)` (Flatten(MaxPool(ReLU(BatchNorm(Conv)))));
`if fce: queries = model.f(support, queries)`, an `nn.LSTMCell` unrolled with `h = h_hat + queries`.

False finding: GA403 suspicious at the root ("its gradient at 0 is infinite, so backward() gives
NaN there"). Without fce a zero row is one where every ReLU output is 0, and the NaN made at the
root goes back to those ReLUs, whose backward puts 0 where the input was not positive; with fce the
rows are LSTM cell states plus the skip connection, the zero vector only on a null set of weights.
Either way no parameter gets a NaN.

Verified with torch 2.13 (CPU): one query row is forced to the zero vector (its ReLU inputs are all
negative); its gradient at the root is NaN, yet every parameter's gradient is finite, in both
configurations, at every step. Prints OK.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

fce = len(sys.argv) > 1 and sys.argv[1] == "--fce"
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
cell = nn.LSTMCell(16, 16)
params = list(encoder.parameters()) + (list(cell.parameters()) if fce else [])
optimizer = torch.optim.Adam(params, lr=1e-3)


def cosine(x, y):
    nx = x / (x.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-8)
    ny = y / (y.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-8)
    return 1 - nx @ ny.t()


def run(fce):
    with torch.no_grad():
        encoder[0].bias.fill_(-5.0)
    for it in range(3):
        x = torch.randn(10, 8)
        x[6] = 0  # every ReLU input of this row is the bias, -5: an all-zero embedding
        emb = encoder(x)
        support, queries = emb[:5], emb[5:]
        if fce:
            h_hat, c = cell(queries)
            queries = h_hat + queries
        loss = F.cross_entropy(-cosine(queries, support), torch.arange(5))
        optimizer.zero_grad()
        loss.backward()
        assert torch.isfinite(loss)
        assert all(torch.isfinite(p.grad).all() for p in params if p.grad is not None)
        optimizer.step()


run(fce)
if __name__ == "__main__" and not fce:
    fce = True
    params = list(encoder.parameters()) + list(cell.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-3)
    run(fce)
print("OK")

# reduction-of: SimGNN@be3ee6193a7c src/simgnn.py:60 GA402
# false: GA402
# quiet: GA402
"""A histogram of similarity scores normalised by its own total, used as extra features.

The real code (graph similarity learning): `scores = torch.mm(f1, f2).detach()`,
`hist = torch.histc(scores, bins=self.args.bins)`, then `hist = hist / torch.sum(hist)`, and the
histogram is concatenated to the pooled features fed to the scoring layers.

False finding: GA402 suspicious at the division: "division by a value that can be exactly 0 (a sum
of non-negative values, a count)". With `min` and `max` left at 0 (the defaults), `torch.histc` bins
the data's own range, min to max: every score falls in a bin, so the counts sum to the number of
scores, at least 1. (With an explicit range, scores outside it are not counted and the sum can be 0:
still flagged, tests/data/bugs/histogram_fixed_range.py.)

Verified with torch 2.13 (CPU): the histogram sums to the number of scores for random, constant and
all-negative scores, and three training steps keep finite parameters. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
for scores in (torch.randn(35), torch.full((35,), 3.0), -torch.rand(35) - 5):
    assert torch.histc(scores, bins=4).sum() == scores.numel()

enc = nn.Linear(6, 8)
head = nn.Linear(8 + 4, 1)
opt = torch.optim.Adam([*enc.parameters(), *head.parameters()], lr=1e-2)
for step in range(3):
    a, b = enc(torch.randn(5, 6)), enc(torch.randn(7, 6))
    scores = torch.mm(a, b.t()).detach().view(-1, 1)
    hist = torch.histc(scores, bins=4)
    hist = hist / torch.sum(hist)
    pooled = torch.cat([a.mean(0), hist.view(-1)])
    loss = (head(pooled) - 1.0).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert all(torch.isfinite(p).all() for p in [*enc.parameters(), *head.parameters()])
print("OK")

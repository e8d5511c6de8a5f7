# runtime: nonfinite
# confidence: suspicious
"""A histogram over a fixed range [0, 1] normalised by its own total: scores outside the range are
not counted, and a batch whose scores all fall outside (here every score is negative) has a total
of 0, so the features, the loss and every gradient are NaN."""
import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Linear(6, 8)
head = nn.Linear(8 + 4, 1)
opt = torch.optim.Adam([*enc.parameters(), *head.parameters()], lr=1e-2)
for step in range(3):
    a, b = enc(torch.randn(5, 6)), enc(torch.randn(7, 6))
    scores = -torch.mm(a, b.t()).detach().abs().view(-1, 1) - 0.1
    hist = torch.histc(scores, bins=4, min=0.0, max=1.0)
    hist = hist / torch.sum(hist)  # <- GA402
    pooled = torch.cat([a.mean(0), hist.view(-1)])
    loss = (head(pooled) - 1.0).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()

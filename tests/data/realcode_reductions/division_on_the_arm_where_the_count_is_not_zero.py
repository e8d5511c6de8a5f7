# reduction-of: rdml@efddbf23ccbe criteria/margin.py:67 GA402
# false: GA402
# quiet: GA402
"""A margin loss over sampled triplets, averaged over the active pairs: the count of active pairs
is tested against 0 first, and the division by it sits in the `else` arm.

False finding: GA402 at `loss / pair_count` ("a value that can be exactly 0"): on the arm where it
runs, `pair_count == 0` was false, so the count (>= 0) is at least 1.

Verified with torch 2.13 (CPU): a batch with no active pair takes the first arm (loss 0, finite
gradients), a batch with active pairs the second; the embedding trains. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
net = nn.Linear(8, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
beta, margin = 1.2, 0.2
for step, scale in enumerate([1.0, 1e-4, 1.0]):
    emb = F.normalize(net(torch.randn(9, 8) * scale), dim=1)
    a, p, n = emb[0::3], emb[1::3], emb[2::3]
    d_ap, d_an = (a - p).norm(dim=1), (a - n).norm(dim=1)
    pos_loss = F.relu(d_ap - beta + margin)
    neg_loss = F.relu(beta - d_an + margin)
    pair_count = torch.sum((pos_loss > 0.0) + (neg_loss > 0.0)).to(torch.float)
    if pair_count == 0.0:
        loss = torch.sum(pos_loss + neg_loss)
    else:
        loss = torch.sum(pos_loss + neg_loss) / pair_count
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(q.grad).all() for q in net.parameters())
    opt.step()
print("OK")

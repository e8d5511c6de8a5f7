# reduction-of: pytorch_geometric@5c6461b2305a torch_geometric/nn/attention/sgformer.py:71 GA402
# false: GA402
"""Linear attention that normalises queries and keys by their row norms, after replacing every
exact zero entry with a small epsilon.

The real code (PyG's SGFormer attention): `qs, ks = self.q(x), self.k(x)` (Linear layers without a
bias by default), `qs[qs == 0] = epsilon; ks[ks == 0] = epsilon`, then
`qs, ks = map(lambda t: t / torch.linalg.norm(t, ord=2, dim=-1, keepdim=True), (qs, ks))`.

False finding: GA402 suspicious at the division ("division by a value that can be exactly 0"):
after the replacement no entry is 0, so no row is the zero vector and no row norm is 0.

Verified with torch 2.13 (CPU): one input row is all zeros, so its bias-free projections are all
zeros before the replacement; the loss and every gradient stay finite, the weights change. Prints OK.
"""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.q = nn.Linear(c, c, bias=False)
        self.k = nn.Linear(c, c, bias=False)
        self.v = nn.Linear(c, c, bias=False)

    def forward(self, x):
        qs, ks, vs = self.q(x), self.k(x), self.v(x)
        epsilon = 1e-6
        qs[qs == 0] = epsilon
        ks[ks == 0] = epsilon
        qs, ks = map(lambda t: t / torch.linalg.norm(t, ord=2, dim=-1, keepdim=True), (qs, ks))
        return (qs @ ks.t()) @ vs


model = Attention(8)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for it in range(3):
    x = torch.randn(6, 8)
    x[2] = 0
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in model.parameters())
    before = model.q.weight.detach().clone()
    optimizer.step()
    assert not torch.equal(before, model.q.weight)
print("OK")

# reduction-of: adversarial-attacks-pytorch@23620a694a36 robustbench/model_zoo/architectures/paf_wide_resnet.py:12 GA402
# false: GA402
# quiet: GA402
"""A parametric activation with two learned scalars: `x * (sigmoid(|a| x) - |b|) / (1 - |b|)`.

False finding: GA402 suspicious at the division, read as `1 - p` of a probability-like value that
is exactly 1 where a sigmoid saturates. The subtrahend is `|b|`, the magnitude of a learned scalar:
no sigmoid, no probability; `1 - |b|` is 0 only if training lands `b` on exactly +-1, a single point
of a continuous parameter. A magnitude (`abs`, a square, a norm) is now known to be >= 0
(Fact.NONNEG), and the complement heuristic is for values the engine knows nothing of.

Verified with torch 2.13 (CPU): trained from b = 1e-8 for 200 steps the loss and every gradient
stay finite and |b| stays far from 1. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PSiLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(1.0))
        self.beta = nn.Parameter(torch.tensor(1e-8))

    def forward(self, x):
        return x * (F.sigmoid(torch.abs(self.alpha) * x) - torch.abs(self.beta)) / (1 - torch.abs(self.beta))


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 16), PSiLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(200):
    x = torch.randn(32, 4)
    loss = (net(x) - x.sum(1, keepdim=True)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in net.parameters())
    opt.step()
assert abs(net[1].beta.item()) < 0.9
print("OK")

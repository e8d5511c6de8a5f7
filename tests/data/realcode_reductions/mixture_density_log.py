# reduction-of: Popular-RL-Algorithms@3b814ea159f1 pmoe_ppo.py:156 GA401
# false: GA401
# quiet: GA401
"""A mixture-of-Gaussians policy scores an action by the log of its mixture density:
`einsum("ij,ij->i", mix_coef, normal.log_prob(a).sum(-1).exp()).log()`.

False finding: GA401 suspicious, "log of raw activations (a layer's unbounded output)": an einsum
was taken for a layer. Its operands are softmax mixture weights and exponentials of log-densities,
both >= 0: the contraction is a density, never negative, so the log is never NaN. A contraction
of non-negative operands is now known to be >= 0 (Fact.NONNEG), and only a layer's output as it is
(Mark.RAW: views, means, scalings or shifts by a number of it) is "raw activations".

Verified with torch 2.13 (CPU): 100 steps of maximum likelihood keep the loss and the gradients
finite. Prints OK.
"""
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)
mean_head = nn.Linear(4, 6)
mix_head = nn.Linear(4, 3)
opt = torch.optim.Adam([*mean_head.parameters(), *mix_head.parameters()], lr=1e-2)
for _ in range(100):
    s = torch.randn(8, 4)
    a = s[:, None, :2] + 0.1 * torch.randn(8, 1, 2)
    mean = mean_head(s).view(8, 3, 2)
    mix_coef = torch.softmax(mix_head(s), -1)
    normal = Normal(mean, 1.0)
    log_prob = torch.einsum("ij,ij->i", mix_coef, normal.log_prob(a).sum(-1).exp()).log()
    loss = -log_prob.mean()
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in mean_head.parameters())
    opt.step()
print("OK")

# reduction-of: mdistiller@a08d46f10d61 mdistiller/distillers/CRD.py:97 GA402
# false: GA402, GA403
# quiet: GA402, GA403
"""A contrastive-distillation embedding head: a linear projection (with its bias) followed by an L2
normalisation written by hand, `x.pow(2).sum(1).pow(0.5)` and `x.div(norm)`, with no eps.

False findings: GA403 at the root and GA402 at the division ("a value that can be exactly 0"). The
normalised value is the output of an nn.Linear with a bias: a row of it is the zero vector only
where the weights and the input line up exactly against the bias (a set of measure zero); even an
all-zero input feature gives the bias, not 0. What can make a norm 0 is a value with exact zeros of
its own (ReLU features, a mask, a bias-free map of them, a difference of a tensor with itself).

Verified with torch 2.13 (CPU): with all-zero input features the norm is the bias's norm, the loss
and every gradient are finite, and the head trains. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Normalize(nn.Module):
    def __init__(self, power=2):
        super().__init__()
        self.power = power

    def forward(self, x):
        norm = x.pow(self.power).sum(1, keepdim=True).pow(1.0 / self.power)
        return x.div(norm)


class Embed(nn.Module):
    def __init__(self, dim_in=16, dim_out=8):
        super().__init__()
        self.linear = nn.Linear(dim_in, dim_out)
        self.l2norm = Normalize(2)

    def forward(self, x):
        x = x.view(x.shape[0], -1)
        return self.l2norm(self.linear(x))


torch.manual_seed(0)
embed_s, embed_t = Embed(), Embed()
opt = torch.optim.SGD([*embed_s.parameters(), *embed_t.parameters()], lr=0.1)
feat_s = torch.relu(torch.randn(6, 16))
feat_s[0] = 0.0  # a sample whose pooled features are all zero
feat_t = torch.relu(torch.randn(6, 16))
for step in range(3):
    z_s, z_t = embed_s(feat_s), embed_t(feat_t)
    loss = F.cross_entropy(z_s @ z_t.T / 0.07, torch.arange(6))
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in [*embed_s.parameters(), *embed_t.parameters()])
    opt.step()
print("OK")

# reduction-of: diffusers@58eb52c0803e examples/research_projects/lpl/lpl_loss.py:15 GA403
# false: GA403
# quiet: GA403
"""A perceptual loss that normalises both feature maps by the norm of the target's features.

The real code (latent perceptual loss): the target's features are computed with
`torch.set_grad_enabled(not disable_grads)` and `disable_grads=True`, their outliers are zeroed under
no_grad (`feat * mask`, the mask from comparisons with quantiles); then
`norm = torch.sqrt(torch.sum(target ** 2, dim=1, keepdim=True))` and both maps are divided by
`norm + eps`.

False finding: GA403 suspicious at the sqrt: "its gradient at 0 is infinite, so backward() gives NaN
there". sqrt(0) is 0 forward; only its derivative is infinite, and backward() evaluates it only for an
input that requires grad. The target's features carry no gradient, so no derivative of this sqrt is
ever taken, even where the target is exactly zero.

Verified with torch 2.13 (CPU): with an all-zero target, three steps run and every gradient is
finite. Prints OK.
"""
import torch
import torch.nn as nn


def cross_normalize(inp, target, eps=1e-6):
    norm = torch.sqrt(torch.sum(target**2, dim=1, keepdim=True))
    return inp / (norm + eps), target / (norm + eps)


class Perceptual(nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = nn.Linear(4, 4, bias=False)

    def features(self, z, disable_grads=False):
        with torch.set_grad_enabled(not disable_grads):
            return torch.relu(self.decoder(z))

    def forward(self, inp, target):
        x = self.features(inp)
        y = self.features(target, disable_grads=True)
        with torch.no_grad():
            mask = ((y > y.quantile(0.02)) * (y < y.quantile(0.98) + 1.0)).bool()
            y = y * mask
        x, y = cross_normalize(x, y)
        return ((x - y) ** 2).mean()


torch.manual_seed(0)
net = nn.Linear(4, 4)
perceptual = Perceptual().requires_grad_(False)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    z = torch.randn(8, 4)
    target = torch.zeros(8, 4)    # its features are exactly zero: the sqrt is taken at 0
    assert perceptual.features(target, disable_grads=True).eq(0).all()
    loss = perceptual(net(z), target)
    opt.zero_grad()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters())
    opt.step()
print("OK")

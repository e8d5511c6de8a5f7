# reduction-of: melgan-neurips@6488045bfba1 scripts/train.py:151 GA201
# false: GA201
"""A hinge-loss GAN whose generator and discriminator are built from convolutions wrapped in
`torch.nn.utils.weight_norm`; each step clears gradients with the module's own `zero_grad()`
(`netD.zero_grad(); loss_D.backward(); optD.step()`, then the same for netG and optG), with
`optD` and `optG` built from `netD.parameters()` and `netG.parameters()`.

The real code (MelGAN's training script) has a multi-scale discriminator that returns a list of
per-scale outputs, initialises its convolutions through `self.apply(weights_init)`, and sums the
per-scale hinge losses into `loss_D = 0; loss_D += ...`.

False finding: GA201 confirmed at `optD.step()` (and at `optG.step()`): "nothing in the loop
clears the gradients of its parameters". `netD.zero_grad()` does, and optD holds exactly
netD's parameters (weight_g, weight_v and bias of each weight-normed convolution). The engine
lost the parameters of the weight_norm-wrapped modules, so it did not count the module's
zero_grad() as clearing what the optimizer holds.

Verified with torch 2.13 (CPU): after each `zero_grad()` of the module no parameter of its
optimizer holds a gradient, backward fills them again, and every parameter of the generator and
every weight_g and weight_v of the discriminator change. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm


def weights_init(m):
    if m.__class__.__name__.find("Conv") != -1:
        m.weight_v.data.normal_(0.0, 0.02)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(weight_norm(nn.Conv1d(1, 4, 3)), nn.LeakyReLU(0.2))
        self.head = weight_norm(nn.Conv1d(4, 1, 3))
        self.apply(weights_init)

    def forward(self, x):
        return [self.head(self.body(x)), self.head(self.body(F.avg_pool1d(x, 2)))]


torch.manual_seed(0)
netG = nn.Sequential(weight_norm(nn.Conv1d(1, 1, 3, padding=1)), nn.Tanh())
netD = Discriminator()
optG = torch.optim.SGD(netG.parameters(), lr=0.1)
optD = torch.optim.SGD(netD.parameters(), lr=0.1)
g0 = [p.detach().clone() for p in netG.parameters()]
d0 = {n: p.detach().clone() for n, p in netD.named_parameters() if "weight" in n}
for _ in range(3):
    x_t = torch.randn(2, 1, 16)
    x_pred = netG(torch.randn(2, 1, 16))
    loss_D = 0
    for score in netD(x_pred.detach()):
        loss_D += F.relu(1 + score).mean()
    for score in netD(x_t):
        loss_D += F.relu(1 - score).mean()
    netD.zero_grad()
    assert all(p.grad is None for group in optD.param_groups for p in group["params"])
    loss_D.backward()
    optD.step()
    loss_G = 0
    for score in netD(x_pred):
        loss_G += -score.mean()
    netG.zero_grad()
    assert all(p.grad is None for group in optG.param_groups for p in group["params"])
    loss_G.backward()
    assert all(p.grad is not None for p in netG.parameters())
    optG.step()
assert all(not torch.equal(a, b) for a, b in zip(g0, netG.parameters()))
assert all(not torch.equal(d0[n], p) for n, p in netD.named_parameters() if n in d0)
print("OK")

# reduction-of: pytorch-gan-collections@860e90bd882e dcgan.py:143 GA301
# false: GA301
"""A GAN whose loss is picked from a table of classes (`loss_fns[FLAGS.loss]()`), one of them a
subclass of nn.BCEWithLogitsLoss whose forward calls `super().forward(...)`; the discriminator's
loss `loss.backward()` runs once per discriminator step.

False finding: GA301 confirmed at `loss.backward()`: "shares part of its graph with a loss whose
backward() already ran". The engine ran that one backward() twice: once for the part of the value it
knew as a tensor and once for the part it did not (the super().forward of a torch loss class), and the
second reached what the first freed. A backward() of a value is now recorded once.

Verified with torch 2.13 (CPU): every loss class trains the discriminator. Prints OK.
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class BCEWithLogits(nn.BCEWithLogitsLoss):
    def forward(self, pred_real, pred_fake=None):
        if pred_fake is not None:
            loss_real = super().forward(pred_real, torch.ones_like(pred_real))
            loss_fake = super().forward(pred_fake, torch.zeros_like(pred_fake))
            return loss_real + loss_fake
        return super().forward(pred_real, torch.ones_like(pred_real))


class Hinge(nn.Module):
    def forward(self, pred_real, pred_fake=None):
        if pred_fake is not None:
            return F.relu(1 - pred_real).mean() + F.relu(1 + pred_fake).mean()
        return -pred_real.mean()


loss_fns = {"bce": BCEWithLogits, "hinge": Hinge}
choice = sys.argv[1] if len(sys.argv) > 1 else "hinge"
torch.manual_seed(0)
net_G, net_D = nn.Linear(4, 6), nn.Linear(6, 1)
loss_fn = loss_fns[choice]()
optim_D = torch.optim.Adam(net_D.parameters(), lr=1e-3)
for name in (choice, "bce"):
    loss_fn = loss_fns[name]()
    before = net_D.weight.detach().clone()
    for _ in range(2):
        with torch.no_grad():
            fake = net_G(torch.randn(8, 4)).detach()
        loss = loss_fn(net_D(torch.randn(8, 6)), net_D(fake))
        optim_D.zero_grad()
        loss.backward()
        optim_D.step()
    assert not torch.equal(before, net_D.weight)
print("OK")

# reduction-of: HiFi-GAN@c5535999e9a1 utils/train.py:130 GA301
# false: GA301, GA304
"""A GAN generator's adversarial loss over a multi-head discriminator, written as rishikksh20's
HiFi-GAN trainer wrote it (the parent of a held19 bug's fix): `for score in disc(fake): adv_loss =
...`, then `adv_loss / 3` after the loop, then backward.

False findings: GA301 confirmed at the division ("carries a tensor with the previous iteration's
graph") and GA304 confirmed at the discriminator's call ("a graph built before optim_d.step()
changed them"). After the loop, `adv_loss` keeps the previous iteration's value (whose graph the
last backward freed, through parameters the discriminator's step changed since) only if the loop
runs no iteration; the discriminator always returns three scores. Torch raises only on an empty
loop: GA301 stays, suspicious, and says so; GA304 is not claimed.

Verified with torch 2.13 (CPU): three iterations of both steps succeed. Prints OK.
"""
import torch
import torch.nn as nn


class MultiDisc(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(8, 1) for _ in range(3)])

    def forward(self, x):
        return [h(x) for h in self.heads]


torch.manual_seed(0)
generator, disc = nn.Linear(4, 8), MultiDisc()
optim_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
optim_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
for step in range(3):
    z, real = torch.randn(5, 4), torch.randn(5, 8)
    optim_g.zero_grad()
    fake = generator(z)
    for score in disc(fake):
        adv_loss = (score - 1).pow(2).mean()
    adv_loss = adv_loss / 3
    adv_loss.backward()
    optim_g.step()
    optim_d.zero_grad()
    loss_d = sum((s - 1).pow(2).mean() for s in disc(real)) + sum(s.pow(2).mean() for s in disc(fake.detach()))
    loss_d.backward()
    optim_d.step()
print("OK")

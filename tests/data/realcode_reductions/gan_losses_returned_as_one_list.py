# reduction-of: pix2pixHD@14b3b3c7fff4 train.py:95 GA301
# false: GA301
"""A GAN whose model computes every loss in one forward and returns them as a list; the loop
averages them with a comprehension, names them with zip(), backpropagates the generator's sum,
steps, then the discriminator's. The discriminator's losses see the generator's output detached,
and the generator's feature-matching term sees the discriminator's real features detached: the
two losses share no graph.

False finding: GA301 confirmed, "`loss_D` shares part of its graph with a loss whose backward()
already ran": the comprehension over the list joins its elements, so every named loss looked like
any of them. Across two optimizers a shared graph is taken as proven only when the shared value is
made in the training code itself; this one is reported suspicious at most.

Verified with torch 2.13 (CPU): both backward() calls succeed every iteration. Prints OK.
"""
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.netD = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, z, real):
        fake = self.netG(z)
        d_fake = self.netD(fake.detach()).pow(2).mean()
        pred_real = self.netD(real)
        d_real = (pred_real - 1).pow(2).mean()
        pred_fake = self.netD(fake)
        g_gan = (pred_fake - 1).pow(2).mean()
        g_feat = (pred_fake - pred_real.detach()).abs().mean()
        return [g_gan, g_feat, d_real, d_fake]


torch.manual_seed(0)
model = Pair()
names = ["G_GAN", "G_Feat", "D_real", "D_fake"]
optimizer_G = torch.optim.Adam(model.netG.parameters(), lr=1e-3)
optimizer_D = torch.optim.Adam(model.netD.parameters(), lr=1e-3)
for it in range(3):
    losses = model(torch.randn(8, 4), torch.randn(8, 4))
    losses = [torch.mean(x) if not isinstance(x, int) else x for x in losses]
    loss_dict = dict(zip(names, losses))
    loss_D = (loss_dict["D_fake"] + loss_dict["D_real"]) * 0.5
    loss_G = loss_dict["G_GAN"] + loss_dict.get("G_Feat", 0)
    optimizer_G.zero_grad()
    loss_G.backward()
    optimizer_G.step()
    optimizer_D.zero_grad()
    loss_D.backward()
    optimizer_D.step()
print("OK")

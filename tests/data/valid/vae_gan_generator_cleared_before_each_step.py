# runtime: trains
"""As bugs/vae_gan_generator_stepped_twice_cleared_once.py, with the project's fix: the generator's
gradients are cleared before the reconstruction backward too, so each of its two steps applies
only the gradients of its own loss."""
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(8, 4), nn.Tanh(), nn.Linear(4, 8))
netD = nn.Linear(8, 1)
bce, mse = nn.BCEWithLogitsLoss(), nn.MSELoss()
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
for it in range(4):
    real = torch.randn(16, 8)
    optD.zero_grad()
    d_loss = bce(netD(real), torch.ones(16, 1)) + bce(netD(netG(real).detach()), torch.zeros(16, 1))
    d_loss.backward()
    optD.step()
    netG.zero_grad()
    rec_loss = mse(netG(real), real)
    rec_loss.backward()
    optG.step()
    netG.zero_grad()
    g_loss = bce(netD(netG(real)), torch.ones(16, 1))
    g_loss.backward()
    optG.step()

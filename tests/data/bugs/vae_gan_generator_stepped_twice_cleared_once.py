# runtime: stale-grads
"""A VAE-GAN loop (after dcgan_vae_pytorch) steps the generator twice per iteration: once on the
reconstruction loss, once on the adversarial loss. Its gradients are cleared only before the
adversarial backward, so what that backward leaves is still in `.grad` when the next iteration's
reconstruction step runs: every reconstruction step applies the previous adversarial gradient a
second time."""
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
    rec_loss = mse(netG(real), real)
    rec_loss.backward()
    optG.step()  # <- GA201
    netG.zero_grad()
    g_loss = bce(netD(netG(real)), torch.ones(16, 1))
    g_loss.backward()
    optG.step()

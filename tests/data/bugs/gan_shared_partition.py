# runtime: error: modified by an inplace operation
"""A GAN whose generator loss reuses the discriminator-step graph (kept with retain_graph=True):
the discriminator's step changes weights that graph saved, so the generator's backward raises."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())
for i in range(2):
    opt_g.zero_grad()
    opt_d.zero_grad()
    real, z = torch.randn(4, 2), torch.randn(4, 4)
    fake = G(z)
    d_real, d_fake = D(real), D(fake)  # <- GA304
    log_z = torch.logsumexp(torch.cat([-d_real, -d_fake]).flatten(), dim=0)
    d_loss = 0.25 * torch.sum(d_real) + log_z
    d_loss.backward(retain_graph=True)
    opt_d.step()
    g_loss = 0.125 * (torch.sum(d_real) + torch.sum(d_fake)) + log_z
    g_loss.backward()
    opt_g.step()

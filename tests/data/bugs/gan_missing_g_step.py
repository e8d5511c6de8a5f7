# runtime: no-update: G
"""A small GAN on 2-D points: the generator's loss is backpropagated but its optimizer's step()
was dropped when the loop was reorganised."""
import torch
import torch.nn as nn

torch.manual_seed(0)
latent = 4
G = nn.Sequential(nn.Linear(latent, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()


def real_batch(n):
    angle = torch.rand(n) * 6.283
    return torch.stack([angle.cos(), angle.sin()], dim=1)


for it in range(4):
    real = real_batch(32)
    z = torch.randn(32, latent)
    fake = G(z)

    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(32, 1)) + bce(D(fake.detach()), torch.zeros(32, 1))
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(32, 1))
    g_loss.backward()  # <- GA204
    print(it, d_loss.item(), g_loss.item())

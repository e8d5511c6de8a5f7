# runtime: error: Trying to backward through the graph a second time
"""A feature-matching term in the generator's loss reads the discriminator's output on real data from
the discriminator step, whose backward() already freed that graph: the generator's backward() raises.
Neither model scores the other's output there, so no GA304 crossing names it: it is GA301's."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
for it in range(3):
    real, z = torch.randn(16, 4), torch.randn(16, 4)
    fake = G(z)
    opt_d.zero_grad()
    d_real = D(real)
    d_loss = (d_real - 1).pow(2).mean() + D(fake.detach()).pow(2).mean()
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = (D(fake) - 1).pow(2).mean() + (D(fake).mean() - d_real.mean()).abs()
    g_loss.backward()  # <- GA301
    opt_g.step()

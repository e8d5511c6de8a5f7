# runtime: trains
"""A GAN trained the standard way: the discriminator sees fake.detach(), the generator's step
recomputes D(fake) after D's update."""
import torch
import torch.nn as nn


def train_gan(G, D, opt_g, opt_d, data, z_dim, epochs=2):
    bce = nn.BCEWithLogitsLoss()
    for epoch in range(epochs):
        for real in data:
            n = real.size(0)
            fake = G(torch.randn(n, z_dim))
            opt_d.zero_grad()
            loss_real = bce(D(real), torch.ones(n, 1))
            loss_fake = bce(D(fake.detach()), torch.zeros(n, 1))
            d_loss = (loss_real + loss_fake) / 2
            d_loss.backward()
            opt_d.step()

            opt_g.zero_grad()
            g_loss = bce(D(fake), torch.ones(n, 1))
            g_loss.backward()
            opt_g.step()
        print(epoch, d_loss.item(), g_loss.item())


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
data = [torch.randn(16, 2) * 0.5 + 1.0 for _ in range(3)]
train_gan(G, D, torch.optim.Adam(G.parameters(), 1e-3), torch.optim.Adam(D.parameters(), 1e-3), data, 3)

# runtime: error: Trying to backward through the graph a second time
"""A DCGAN-style loop on vectors: the discriminator loss uses the generator output without
detaching it, so D's backward frees the generator's graph that G's loss needs."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=8, out=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, out), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, inp=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(inp, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


def train_gan(gen, disc, opt_g, opt_d, steps=3, batch=16):
    criterion = nn.BCEWithLogitsLoss()
    ones, zeros = torch.ones(batch, 1), torch.zeros(batch, 1)
    for step in range(steps):
        real = torch.randn(batch, 16).tanh()
        fake = gen(torch.randn(batch, 8))
        opt_d.zero_grad()
        d_loss = criterion(disc(real), ones) + criterion(disc(fake), zeros)  # <- GA304
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = criterion(disc(fake), ones)
        g_loss.backward()
        opt_g.step()


torch.manual_seed(0)
G, D = Generator(), Discriminator()
train_gan(G, D, torch.optim.Adam(G.parameters(), 2e-4), torch.optim.Adam(D.parameters(), 2e-4))

# runtime: trains
"""A GAN step that builds both losses first, then trains G and then D: the generator's loss is
backpropagated before any step changed the D weights its graph saved, and D's gradients from it
are cleared before D's own backward."""
import torch
import torch.nn as nn


def train():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
    opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
    mse = nn.MSELoss()
    for _ in range(3):
        z, real = torch.randn(6, 4), torch.randn(6, 4)
        fake = G(z)
        adv = mse(D(fake), torch.ones(6, 1))
        g_total = mse(fake, real) + 0.05 * adv
        d_loss = mse(D(real), torch.ones(6, 1)) + mse(D(fake.detach()), torch.zeros(6, 1))
        opt_G.zero_grad()
        g_total.backward()
        opt_G.step()
        opt_D.zero_grad()
        d_loss.backward()
        opt_D.step()


if __name__ == "__main__":
    train()

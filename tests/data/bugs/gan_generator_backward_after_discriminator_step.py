# runtime: error: modified by an inplace operation
"""A GAN step that builds both losses first, then trains D and then G. The generator's loss
scores the fake frames with D, so its graph saved D's weights; `opt_D.step()` changes them in place
before `g_total.backward()`, which then raises. (It ran before PyTorch 1.5, which began checking
the parameters the optimizers change.)"""
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
        adv = mse(D(fake), torch.ones(6, 1))  # <- GA304
        g_total = mse(fake, real) + 0.05 * adv
        d_loss = mse(D(real), torch.ones(6, 1)) + mse(D(fake.detach()), torch.zeros(6, 1))
        opt_D.zero_grad()
        d_loss.backward()
        opt_D.step()
        opt_G.zero_grad()
        g_total.backward()
        opt_G.step()


if __name__ == "__main__":
    train()

# runtime: trains
"""WGAN-GP on 2-D points: the gradient penalty differentiates through autograd.grad."""
import torch
import torch.nn as nn


def gradient_penalty(critic, real, fake):
    eps = torch.rand(real.size(0), 1)
    mixed = (eps * real + (1 - eps) * fake).requires_grad_(True)
    scores = critic(mixed)
    grads, = torch.autograd.grad(scores.sum(), mixed, create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


torch.manual_seed(2)
gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
critic = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1, bias=False))  # a bias cancels in W-loss
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0.5, 0.9))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
for it in range(3):
    real = torch.randn(16, 2) + 3
    fake = gen(torch.randn(16, 4)).detach()
    c_loss = critic(fake).mean() - critic(real).mean() + 10 * gradient_penalty(critic, real, fake)
    opt_c.zero_grad()
    c_loss.backward()
    opt_c.step()
    g_loss = -critic(gen(torch.randn(16, 4))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()

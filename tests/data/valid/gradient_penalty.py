# runtime: trains
"""WGAN-GP critic step: the gradient penalty differentiates through autograd.grad with
create_graph=True, then the total critic loss is backpropagated once."""
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1, bias=False))  # a bias cancels out of a WGAN loss
gen = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.0, 0.9))


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads, = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


for it in range(3):
    real = torch.randn(16, 2) + 2
    fake = gen(torch.randn(16, 2))
    opt_c.zero_grad()
    c_loss = critic(fake.detach()).mean() - critic(real).mean() + 10 * gradient_penalty(critic, real, fake.detach())
    c_loss.backward()
    opt_c.step()
    opt_g.zero_grad()
    g_loss = -critic(gen(torch.randn(16, 2))).mean()
    g_loss.backward()
    opt_g.step()

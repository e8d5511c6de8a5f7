# reduction-of: stargan@94dd002e93a2 solver.py:139 GA403
# false: GA403
# quiet: GA403
"""Gradient norms written by hand, as StarGAN's WGAN-GP and StyleGAN2's path-length regularizer
write them: `torch.sqrt(torch.sum(dydx ** 2, dim=1))` of the critic's gradient at interpolated
images, and `grad.square().sum(2).mean(1).sqrt()` of the generator's gradient against its
latents, both taken with `torch.autograd.grad(..., create_graph=True)`.

False finding: GA403 suspicious at each sqrt ("sqrt of a value that can be exactly 0"). The root
is of a gradient of a network, which is the zero vector only where the network is flat in what
the gradient is taken against; a LeakyReLU critic or a generator that trains is not, so the
gradients count as dense values (the convention for a biased layer's output), through a square
too.

Verified with torch 2.13 (CPU): three critic steps and three generator steps with finite losses
and gradients. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
D = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.01), nn.Conv2d(8, 1, 4, 2, 1))
G = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 3 * 8 * 8))
d_opt = torch.optim.Adam(D.parameters(), lr=1e-4)
g_opt = torch.optim.Adam(G.parameters(), lr=1e-4)


def gradient_penalty(y, x):
    weight = torch.ones(y.size())
    dydx = torch.autograd.grad(
        outputs=y, inputs=x, grad_outputs=weight, retain_graph=True, create_graph=True, only_inputs=True
    )[0]
    dydx = dydx.view(dydx.size(0), -1)
    dydx_l2norm = torch.sqrt(torch.sum(dydx**2, dim=1))
    return torch.mean((dydx_l2norm - 1) ** 2)


def path_length_penalty(fake_img, latents, mean_path_length):
    noise = torch.randn_like(fake_img) / 8
    (grad,) = torch.autograd.grad(outputs=(fake_img * noise).sum(), inputs=latents, create_graph=True)
    path_lengths = grad.square().sum(2).mean(1).sqrt()
    return ((path_lengths - mean_path_length) ** 2).mean()


for it in range(3):
    real = torch.randn(4, 3, 8, 8)
    fake = G(torch.randn(4, 16)).view(4, 3, 8, 8)
    alpha = torch.rand(4, 1, 1, 1)
    x_hat = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
    d_loss = -D(real).mean() + D(fake.detach()).mean() + 10 * gradient_penalty(D(x_hat), x_hat)
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()

    latents = torch.randn(4, 2, 16, requires_grad=True)
    imgs = G(latents).mean(1).view(4, 3, 8, 8)
    g_loss = -D(imgs).mean() + 2 * path_length_penalty(imgs, latents, 0.5)
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
    assert torch.isfinite(d_loss) and torch.isfinite(g_loss)
    assert all(torch.isfinite(p.grad).all() for p in [*D.parameters(), *G.parameters()])
print("OK")

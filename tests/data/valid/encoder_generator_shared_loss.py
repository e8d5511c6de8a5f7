# runtime: trains
"""A conditional VAE-GAN generator step: one loss trains encoder and generator together, with a
second, generator-only loss added before the generator's step (BicycleGAN's structure)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
encoder = nn.Linear(6, 4)
generator = nn.Sequential(nn.Linear(4 + 3, 16), nn.ReLU(), nn.Linear(16, 6))
opt_e = torch.optim.Adam(encoder.parameters(), lr=1e-3)
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
for it in range(3):
    real_b, cond = torch.randn(8, 6), torch.randn(8, 3)
    opt_e.zero_grad()
    opt_g.zero_grad()
    z = encoder(real_b)
    fake_b = generator(torch.cat([z, cond], 1))
    loss_ge = F.l1_loss(fake_b, real_b) + 0.01 * z.pow(2).mean()
    loss_ge.backward(retain_graph=True)
    opt_e.step()
    sampled = torch.randn(8, 4)
    loss_latent = F.l1_loss(encoder(generator(torch.cat([sampled, cond], 1))), sampled)
    loss_latent.backward()
    opt_g.step()

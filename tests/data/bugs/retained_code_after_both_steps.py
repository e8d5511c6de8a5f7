# runtime: error: modified by an inplace operation
"""A reference encoder's code is computed once per batch and kept with `retain_graph=True` so that
the discriminator can be updated a second time on a regenerated sample. Both optimizers step in
between, changing the encoder's weights in place, and the second backward() runs back into the
encoder's graph through the kept code: torch raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8))
generator = nn.Sequential(nn.Linear(8 + 3, 16), nn.ReLU(), nn.Linear(16, 6))
critic = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam([*encoder.parameters(), *generator.parameters()], lr=1e-3)
opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3)

for it in range(3):
    references, layout, real = torch.randn(5, 6), torch.randn(4, 3), torch.randn(4, 6)
    code = encoder(references).mean(dim=0, keepdim=True).expand(4, -1)
    fake = generator(torch.cat([code, layout], dim=1))

    opt_g.zero_grad()
    opt_d.zero_grad()
    loss_g = -critic(fake).mean() + (fake - real).abs().mean()
    loss_d = F.relu(1 - critic(real)).mean() + F.relu(1 + critic(fake)).mean()
    (loss_g + loss_d).backward(retain_graph=True)  # <- GA302
    opt_g.step()
    opt_d.step()

    # the critic again, on a sample regenerated from the same code
    fake = generator(torch.cat([code, layout], dim=1))
    opt_d.zero_grad()
    loss_d = F.relu(1 - critic(real)).mean() + F.relu(1 + critic(fake)).mean()
    loss_d.backward()
    opt_d.step()

# runtime: mixed-grads
"""A GAN trained with gradient accumulation (after so-vits-svc-5.0): both optimizers step and clear
every `accum` micro-batches, under the same counter test, and nothing clears the discriminator's
gradients between the generator's backward, which runs through D, and D's step: D is updated with
the generator's objective mixed into its own."""
import torch
import torch.nn as nn

torch.manual_seed(0)
gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
disc = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-4)
accum = 2
for step in range(6):
    z, real = torch.randn(16, 8), torch.randn(16, 8)
    fake = gen(z)
    loss_g = ((disc(fake) - 1) ** 2).mean() + (fake - real).abs().mean()  # <- GA304
    (loss_g / accum).backward()
    if (step + 1) % accum == 0:
        opt_g.step()
        opt_g.zero_grad()
    loss_d = ((disc(real) - 1) ** 2).mean() + (disc(fake.detach()) ** 2).mean()
    (loss_d / accum).backward()
    if (step + 1) % accum == 0:
        opt_d.step()
        opt_d.zero_grad()

"""A small GAN that learns a ring of eight 2-D Gaussians.

Alternating updates: the discriminator sees real points and detached fakes, then the generator
is trained to make the discriminator call its samples real (non-saturating loss).
This script is correct; it is here to show what gradaudit leaves alone.

    python gan_training.py --steps 200

Runs on CPU in a few seconds (no downloads, nothing written to disk).
"""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def sample_ring(n, generator, modes=8, radius=2.0, std=0.05):
    angles = torch.randint(0, modes, (n,), generator=generator).float() * (2 * math.pi / modes)
    centers = radius * torch.stack([torch.cos(angles), torch.sin(angles)], dim=1)
    return centers + std * torch.randn(n, 2, generator=generator)


def mlp(in_dim, hidden, out_dim):
    return nn.Sequential(
        nn.Linear(in_dim, hidden),
        nn.LeakyReLU(0.2),
        nn.Linear(hidden, hidden),
        nn.LeakyReLU(0.2),
        nn.Linear(hidden, out_dim),
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--latent-dim", type=int, default=8)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)

    generator = mlp(args.latent_dim, args.hidden, 2)
    discriminator = mlp(2, args.hidden, 1)
    opt_g = torch.optim.Adam(generator.parameters(), lr=args.lr, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=args.lr, betas=(0.5, 0.999))

    ones = torch.ones(args.batch_size, 1)
    zeros = torch.zeros(args.batch_size, 1)

    for step in range(args.steps):
        real = sample_ring(args.batch_size, g)
        z = torch.randn(args.batch_size, args.latent_dim)
        fake = generator(z)

        # Discriminator: real -> 1, fake -> 0. The fakes are detached so this loss
        # does not reach the generator.
        opt_d.zero_grad()
        d_real = discriminator(real)
        d_fake = discriminator(fake.detach())
        d_loss = (
            F.binary_cross_entropy_with_logits(d_real, ones)
            + F.binary_cross_entropy_with_logits(d_fake, zeros)
        )
        d_loss.backward()
        opt_d.step()

        # Generator: make the (just updated) discriminator say "real".
        opt_g.zero_grad()
        g_loss = F.binary_cross_entropy_with_logits(discriminator(fake), ones)
        g_loss.backward()
        opt_g.step()

        if step % 50 == 0 or step == args.steps - 1:
            with torch.no_grad():
                radius = generator(torch.randn(512, args.latent_dim)).norm(dim=1).mean()
            print(
                f"step {step:4d}  d_loss {d_loss.item():.3f}  g_loss {g_loss.item():.3f}  "
                f"mean radius {radius.item():.2f}"
            )


if __name__ == "__main__":
    main()

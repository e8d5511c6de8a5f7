# runtime: error: modified by an inplace operation
"""An adversarially debiased encoder (after fairlib): the discriminator is built once and parked on
the parsed command-line arguments (`args.discriminator = Discriminator()`), then read back from
them in the loop. The discriminator's own batch update steps its optimizer between the forward
that scored the encoder's output and the encoder loss's backward(): its weight, saved by that
forward, was changed in place, and backward() raises."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Discriminator:
    def __init__(self):
        self.net = nn.Linear(8, 2)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-3)

    def adv_loss(self, hidden, protected):
        return F.cross_entropy(self.net(hidden), protected)

    def train_batch(self, model, x, protected):
        self.optimizer.zero_grad()
        F.cross_entropy(self.net(model(x).detach()), protected).backward()
        self.optimizer.step()


args = argparse.ArgumentParser().parse_args([])
args.discriminator = Discriminator()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x, y, p = torch.randn(16, 8), torch.randint(0, 8, (16,)), torch.randint(0, 2, (16,))
    optimizer.zero_grad()
    hidden = model(x)
    loss = F.cross_entropy(hidden, y) - args.discriminator.adv_loss(hidden, p)  # <- GA304
    args.discriminator.train_batch(model, x, p)
    loss.backward()
    optimizer.step()

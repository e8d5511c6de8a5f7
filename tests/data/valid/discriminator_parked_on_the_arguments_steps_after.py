# runtime: trains
"""The valid look-alike of discriminator_parked_on_the_arguments: the discriminator, parked on the
parsed arguments, takes its own batch update after the encoder's backward() and step."""
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
    loss = F.cross_entropy(hidden, y) - args.discriminator.adv_loss(hidden, p)
    loss.backward()
    optimizer.step()
    args.discriminator.train_batch(model, x, p)

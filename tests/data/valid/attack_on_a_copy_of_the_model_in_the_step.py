# runtime: trains
"""An online adversarial defence: each training iteration first attacks its batch on a frozen deep
copy of the model, several backward() calls into the input, then trains
the model on the attacked batch with one backward() and one step(), the gradients cleared before
the attack. The attack's backward() calls feed no parameter the optimizer holds (the copy's
weights are new tensors): they are not micro-batches of an accumulation, whatever the copy holds
that the engine cannot see (its layer picked by name)."""
import argparse
from copy import deepcopy

import torch
import torch.nn as nn


def attack(model, img, steps=4, alpha=0.01):
    model = deepcopy(model)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    inputs = img.clone().requires_grad_(True)
    target = -model(inputs).detach()
    for _ in range(steps):
        loss = nn.functional.mse_loss(model(inputs), target)
        loss.backward()
        inputs = (inputs + alpha * inputs.grad.sign()).detach().requires_grad_(True)
    return inputs.detach()


parser = argparse.ArgumentParser()
parser.add_argument("--norm", default="LayerNorm")
parser.add_argument("--fused", action="store_true")
args = parser.parse_args([])
torch.manual_seed(0)
# a layer picked by name: the engine cannot see what it holds
model = nn.Sequential(nn.Linear(6, 16), getattr(nn, args.norm)(16), nn.ReLU(), nn.Linear(16, 3))
optimizer_class = torch.optim.SGD
if args.fused:
    optimizer_class = torch.optim.Adam
optimizer = optimizer_class(model.parameters(), lr=0.1)
for epoch in range(3):
    for _ in range(4):
        x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
        optimizer.zero_grad()
        x_adv = attack(model, x)
        loss = nn.functional.cross_entropy(model(x_adv), y)
        loss.backward()
        optimizer.step()

# reduction-of: style-based-gan-pytorch@07fa60be77b0 model.py:444 GA301
# false: GA301
"""A GAN whose generator loss depends on a configuration choice: `if args.loss == 'wgan-gp': loss =
-predict.mean()` / `elif args.loss == 'r1': loss = F.softplus(-predict).mean()`, then
`loss.backward()`; the choice is one of those two (argparse `choices=`).

False finding: GA301 confirmed (anchored in the generator's layer loop): "carries a tensor with the
previous iteration's graph into `loss`". That needs neither arm to run: then `loss` would be the
previous iteration's (or unbound in the first). An if/elif chain comparing one value to several
constants is a configuration dispatch: its fall-through is no path of the program.

Verified with torch 2.13 (CPU): with either choice the generator trains. Prints OK.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--loss", type=str, default="wgan-gp", choices=["wgan-gp", "r1"])

torch.manual_seed(0)
for choice in ("wgan-gp", "r1"):
    args = parser.parse_args(["--loss", choice])
    generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
    discriminator = nn.Linear(6, 1)
    discriminator.requires_grad_(False)  # the generator's step: D is frozen, as in the real code
    g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
    before = generator[0].weight.detach().clone()
    for i in range(3):
        predict = discriminator(generator(torch.randn(8, 4)))
        if args.loss == "wgan-gp":
            loss = -predict.mean()
        elif args.loss == "r1":
            loss = F.softplus(-predict).mean()
        generator.zero_grad()
        loss.backward()
        g_optimizer.step()
    assert not torch.equal(before, generator[0].weight)
print("OK")

# runtime: trains
"""Adversarial training with a PGD attack written with the pre-0.4 wrapper (TRADES, MART): each
attack step rewraps the clamped input as `Variable(torch.clamp(x_pgd, 0, 1), requires_grad=True)`,
a new leaf (torch: `is_leaf`, not the clamp's output), so `x_pgd.grad` after the next backward is
the input's gradient, never the unkept gradient of a non-leaf."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


def pgd(model, x, y, steps=3, step_size=0.01, epsilon=0.03):
    x_pgd = Variable(x.data, requires_grad=True)
    for _ in range(steps):
        loss = F.cross_entropy(model(x_pgd), y)
        loss.backward()
        eta = step_size * x_pgd.grad.data.sign()
        x_pgd = Variable(x_pgd.data + eta, requires_grad=True)
        eta = torch.clamp(x_pgd.data - x.data, -epsilon, epsilon)
        x_pgd = Variable(x.data + eta, requires_grad=True)
        x_pgd = Variable(torch.clamp(x_pgd, 0, 1.0), requires_grad=True)
    return x_pgd.detach()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.rand(4, 8), torch.randint(0, 3, (4,))
    x_adv = pgd(model, x, y)
    opt.zero_grad()
    loss = F.cross_entropy(model(x_adv), y)
    loss.backward()
    opt.step()

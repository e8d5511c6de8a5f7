# runtime: warning: lr_scheduler.step()
"""A per-iteration StepLR stepped before the optimizer: the first learning rate is skipped."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--steps", type=int, default=6)
args = parser.parse_args([])

torch.manual_seed(0)
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=args.lr)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
loss_fn = nn.MSELoss()
for i in range(args.steps):
    x = torch.randn(8, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
    opt.zero_grad()
    loss = loss_fn(net(x), y)
    loss.backward()
    sched.step()  # <- GA207
    opt.step()

# runtime: trains
"""A configuration flag chooses between an optimizer and a hand-written SGD update: the step is
under a condition, but not an accumulation counter."""
import types

import torch
import torch.nn as nn

args = types.SimpleNamespace(use_optimizer=True, lr=0.1)
torch.manual_seed(3)
model = nn.Linear(6, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
for i in range(4):
    x, y = torch.randn(8, 6), torch.randn(8, 2)
    if args.use_optimizer:
        optimizer.zero_grad()
    else:
        model.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    if args.use_optimizer:
        optimizer.step()
    else:
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-args.lr)

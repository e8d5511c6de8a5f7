# runtime: stale-grads
"""The optimizer class is picked by a name from the configuration (`getattr(torch.optim,
name)`, as many research scripts do with `--optim`), and the loop never clears the gradients:
whichever optimizer the name picks, each step applies the sum of all gradients so far."""
import os

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = getattr(torch.optim, os.environ.get("OPTIM", "SGD"))(model.parameters(), lr=1e-2)
for it in range(5):
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()  # <- GA201

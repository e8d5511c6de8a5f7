# runtime: trains
"""As bugs/optimizer_picked_by_name_never_cleared.py, with the gradients cleared each iteration:
the optimizer picked by name is still an optimizer over the model's parameters, and the loop is
right."""
import os

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = getattr(torch.optim, os.environ.get("OPTIM", "SGD"))(model.parameters(), lr=1e-2)
for it in range(5):
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

# runtime: trains
"""As bugs/model_picked_by_name_never_stepped.py, with the step: a model made by a callable the
engine cannot follow is a module of unseen parameters, the loss and the optimizer share them, and
the loop is right."""
import os
import sys

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
model = getattr(sys.modules[__name__], os.environ.get("ARCH", "Net"))()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
for it in range(5):
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

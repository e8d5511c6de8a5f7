# runtime: no-update: model
"""The model class is picked by a name from the configuration through the module's namespace
(`getattr(sys.modules[__name__], arch)`, as `models.__dict__[args.arch]` in many research scripts),
and the optimizer over its parameters is built but never stepped: backward() fills the gradients
every iteration and the weights never change."""
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
    loss.backward()  # <- GA204

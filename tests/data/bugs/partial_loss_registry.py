# runtime: error: grad can be implicitly created only for scalar outputs
"""Losses picked from a registry of functools.partial objects by name; the 'huber' entry was
registered with reduction='none' for per-sample analysis."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

LOSSES = {
    "mse": F.mse_loss,
    "huber": partial(F.huber_loss, delta=1.0, reduction="none"),
}


def run(loss_name="huber", steps=2):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = LOSSES[loss_name]
    for _ in range(steps):
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()  # <- GA305
        opt.step()


run()

# runtime: stale-grads
"""The optimizer class is picked by name at run time (`__import__(module, fromlist=[name])` then
`getattr`, as litgpt does) and the loop never clears the gradients: each step applies the sum of
every batch's gradient so far."""
import importlib

import torch
import torch.nn as nn


def instantiate_optimizer(name, params, **kwargs):
    if "." in name:
        class_module, class_name = name.rsplit(".", 1)
    else:
        class_module, class_name = "torch.optim", name
    module = __import__(class_module, fromlist=[class_name])
    return getattr(module, class_name)(params, **kwargs)


def scheduler_for(optimizer):
    schedulers = importlib.import_module("torch.optim.lr_scheduler")
    return schedulers.StepLR(optimizer, step_size=2)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = instantiate_optimizer("SGD", model.parameters(), lr=0.1)
scheduler = scheduler_for(optimizer)
for it in range(4):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()  # <- GA201
    scheduler.step()

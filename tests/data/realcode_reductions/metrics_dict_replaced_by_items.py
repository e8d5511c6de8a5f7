# reduction-of: neurodiffeq@9f6d6e318ce9 neurodiffeq/temporal.py:918 GA303
# false: GA303
# quiet: GA303
"""A solver's history as neurodiffeq keeps it: each epoch's metrics come as a dict of tensors with
their graphs, then `for k, v in epoch_metrics.items(): epoch_metrics[k] = v.item()` replaces every
value by a Python number before the values are appended to the history.

False finding: GA303 confirmed on `history[name].append(value)`, "a tensor with its autograd graph
is accumulated into state that outlives the iteration". The loop over the dict's own items
replaces the value of every key, so what is appended is a float.

Verified with torch 2.13 (CPU): every value appended to the history is a float. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
metrics = {"mse": lambda p, y: ((p - y) ** 2).mean(), "mae": lambda p, y: (p - y).abs().mean()}
history = {"mse": [], "mae": []}
for epoch in range(3):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    pred = net(x)
    loss = ((pred - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    epoch_metrics = {name: fn(pred, y) for name, fn in metrics.items()}
    for k, v in epoch_metrics.items():
        epoch_metrics[k] = v.item()
    for name, value in epoch_metrics.items():
        history[name].append(value)
assert all(isinstance(v, float) for values in history.values() for v in values)
print("OK")

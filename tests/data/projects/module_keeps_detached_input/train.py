# runtime: trains
"""The layer (layers.py) keeps `x.detach()` of an input that requires grad (an input-gradient
regulariser differentiates with respect to it): the kept copy requires no grad and is no hidden
weight (a false confirmed GA109 on a growing network's layer, checked by its test suite from
another file)."""
import torch
from layers import StatLayer

torch.manual_seed(0)
layer = StatLayer(3, 2)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(5):
    x = torch.randn(8, 3, requires_grad=True)
    out = layer(x)
    (gx,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    loss = out.pow(2).mean() + 0.1 * gx.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# runtime: trains
"""Updates written by hand that clear what they read: `.grad.zero_()` after the update, `p.grad =
None` for a module's parameters, and a loop that only accumulates, with one update after it."""
import torch
import torch.nn as nn

torch.manual_seed(11)
x = torch.rand(64, 1) * 10
y = 3 * x + 5 + torch.randn(64, 1)
w = torch.randn(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for it in range(10):
    loss = (0.5 * (y - (w * x + b)) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
        b -= 0.01 * b.grad
    w.grad.zero_()
    b.grad.data.zero_()

net = nn.Linear(1, 1)
for it in range(10):
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in net.parameters():
            p -= 1e-3 * p.grad
            p.grad = None

v = torch.zeros(1, requires_grad=True)
for chunk in torch.split(x, 16):
    (v * chunk).mean().backward()
with torch.no_grad():
    v -= 0.1 * v.grad

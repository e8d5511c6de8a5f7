# runtime: stale-grads
"""Linear regression with the update written by hand, as course notebooks teach it: the gradients
are never cleared, so each update applies the sum of every gradient so far (greebear's course
notebook, held22). The update is correct code; what it reads from .grad is not this batch's."""
import torch

torch.manual_seed(10)
x = torch.rand(64, 1) * 10
y = 3 * x + 5 + torch.randn(64, 1)
w = torch.randn(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.01

for it in range(20):
    loss = (0.5 * (y - (w * x + b)) ** 2).mean()
    loss.backward()
    b.data.sub_(lr * b.grad)  # <- GA201
    w.data.sub_(lr * w.grad)

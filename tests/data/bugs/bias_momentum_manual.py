# runtime: error: a leaf Variable that requires grad is being used in an in-place operation
"""Linear model trained with a hand-written momentum update."""
import torch

torch.manual_seed(7)
X = torch.randn(40, 3)
y = X @ torch.tensor([2.0, -1.0, 0.5]) + 0.3
w = torch.zeros(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
vw, vb = torch.zeros(3), torch.zeros(1)
for _ in range(5):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    vw = 0.9 * vw + w.grad
    vb = 0.9 * vb + b.grad
    w.add_(-0.05 * vw)  # <- GA111
    b.add_(-0.05 * vb)  # <- GA111
    w.grad = None
    b.grad = None

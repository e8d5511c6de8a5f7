# runtime: error: unsupported operand type(s) for *: 'float' and 'NoneType'
"""Softmax regression from scratch with the update written as a rebinding: after the first step
W is no longer a leaf, so its .grad is None on the next iteration."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(60, 4)
y = torch.randint(0, 3, (60,))
W = torch.zeros(4, 3, requires_grad=True)
lr = 0.5
for epoch in range(5):
    loss = F.cross_entropy(X @ W, y)
    loss.backward()
    W = W - lr * W.grad  # <- GA111

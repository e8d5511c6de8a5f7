# runtime: error: a leaf Variable that requires grad
"""Logistic regression from scratch for a tutorial: the manual SGD update runs outside
torch.no_grad()."""
import torch


def load_data(n=200):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 2, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).float()
    return x, y


def sigmoid_bce(logits, y):
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, y)


x, y = load_data()
w = torch.zeros(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.5
for epoch in range(20):
    logits = x @ w + b
    loss = sigmoid_bce(logits, y)
    loss.backward()
    w -= lr * w.grad  # <- GA111
    b -= lr * b.grad  # <- GA111
    w.grad.zero_()
    b.grad.zero_()
    if epoch % 5 == 0:
        print(epoch, loss.item())

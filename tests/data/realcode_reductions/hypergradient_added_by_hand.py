# reduction-of: dataset-distillation@24e6958cf23b basics.py:67 GA101
# false: GA101
"""Learned inputs trained by an optimizer whose gradient is computed by hand: dataset distillation
adds a hypergradient into the synthetic images' `.grad` (`img.grad.add_(g)`), while the loss of the
same step sees the images only through `.detach()` (an inner run that trains weights on them).

False finding: GA101 confirmed at the `.detach()`: "cuts gradient to the images: they reach `loss`
by no other path, so `optimizer` never changes them". The images get their gradient from the
hand-added hypergradient (computed on a detached copy), not from this loss; the detach is meant. Parameters given a gradient by
hand (`p.grad.add_(g)`, `p.grad = g`) are no longer taken as cut off by a detach.

Verified with torch 2.13 (CPU): the optimizer changes the images (and the weights). Prints OK.
"""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
images = torch.randn(4, 3, requires_grad=True)
labels = torch.tensor([0, 1, 0, 1])
w = torch.zeros(3, 2, requires_grad=True)
optimizer = torch.optim.Adam([images, w], lr=0.01)
x_real, y_real = torch.randn(16, 3), torch.randint(0, 2, (16,))

before = images.detach().clone()
for step in range(3):
    optimizer.zero_grad()
    # the hypergradient of the images, on a copy: how one inner step on them changes the loss on real data
    proxy = images.detach().requires_grad_()
    w0 = torch.zeros(3, 2, requires_grad=True)
    (gw,) = torch.autograd.grad(F.cross_entropy(proxy @ w0, labels), w0, create_graph=True)
    (g,) = torch.autograd.grad(F.cross_entropy(x_real @ (w0 - 0.1 * gw), y_real), proxy)
    # the weights train on the images as fixed data
    data = images.detach()
    loss = F.cross_entropy(data @ w, labels)
    loss.backward()
    images.grad = torch.zeros_like(images)
    images.grad.add_(g)
    optimizer.step()
assert not torch.equal(before, images)
print("OK")

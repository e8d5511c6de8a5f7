# runtime: no-update: images
"""Learned synthetic inputs and weights in one optimizer, but the loss sees the inputs only through
`.detach()` and nothing gives them a gradient by hand: the optimizer never changes them."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
images = torch.randn(4, 3, requires_grad=True)
labels = torch.tensor([0, 1, 0, 1])
w = torch.zeros(3, 2, requires_grad=True)
optimizer = torch.optim.Adam([images, w], lr=0.01)
for step in range(3):
    optimizer.zero_grad()
    data = images.detach()  # <- GA101
    loss = F.cross_entropy(data @ w, labels)
    loss.backward()
    optimizer.step()

# runtime: trains
"""One helper for training and validation: its backward() is guarded by `loss.requires_grad`, and
validation calls it under no_grad, where the guard is false."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def forward_backward(x, y):
    loss = F.cross_entropy(model(x), y)
    if loss.requires_grad:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


for epoch in range(2):
    for _ in range(3):
        forward_backward(torch.randn(4, 4), torch.randint(0, 2, (4,)))
    model.eval()
    with torch.no_grad():
        val = forward_backward(torch.randn(4, 4), torch.randint(0, 2, (4,)))
    model.train()

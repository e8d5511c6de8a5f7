# runtime: error: does not require grad
"""`model.apply(freeze)` runs `freeze` on every submodule: all parameters end up frozen, the
optimizer is given nothing that trains, and backward() raises."""
import torch
import torch.nn as nn


def freeze(m):
    for p in m.parameters():
        p.requires_grad = False


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
model.apply(freeze)  # <- GA107
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

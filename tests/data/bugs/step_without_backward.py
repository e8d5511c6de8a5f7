# runtime: no-update: model
"""A training loop that computes the loss, clears the gradients and steps the optimizer, but never
calls `loss.backward()`: every step applies no gradient and the model never changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)  # <- GA209
    optimizer.step()
    print(loss.item())

# runtime: trains
"""The loss and a weight penalty are backpropagated together; their detached sum is only logged:
the detached terms are not in the loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    aux = model.weight.pow(2).sum()
    (loss + 0.01 * aux).backward()
    optimizer.step()
    logged = loss.detach() + aux.detach()
    print(logged.item())

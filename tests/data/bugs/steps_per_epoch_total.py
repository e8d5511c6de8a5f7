# runtime: graph-kept: total
"""An epoch of a fixed number of steps, each drawing its batch from an iterator, sums the loss
tensors for the epoch's average: `total` is reset only per epoch, so it holds the graph of every
step of the epoch until the epoch ends (and the last epoch's after training)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = iter([(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(12)])
for epoch in range(3):
    total = 0.0
    for _ in range(4):
        x, y = next(data)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss  # <- GA303
    print(epoch, (total / 4).item())

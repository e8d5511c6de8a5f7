# runtime: no-update: model
"""The step and backward are swapped while refactoring a loop with a warmup scheduler: each step
sees the gradients that zero_grad() just cleared."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 5))

for epoch in range(2):
    for _ in range(3):
        x = torch.randn(12, 5)
        y = x.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        optimizer.step()  # <- GA203
        loss.backward()
        warmup.step()
    print(epoch, loss.item())

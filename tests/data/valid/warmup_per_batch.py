# runtime: trains
"""A warmup scheduler stepped per batch after the optimizer, inside a helper."""
import torch
import torch.nn as nn

torch.manual_seed(1)
model = nn.Linear(5, 2)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 4))


def train_step(x, y):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    warmup.step()
    return loss.item()


for step in range(6):
    train_step(torch.randn(4, 5), torch.randn(4, 2))

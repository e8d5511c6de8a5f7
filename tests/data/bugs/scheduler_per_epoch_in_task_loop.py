# runtime: trains
"""A continual run whose helper rebuilds the cosine scheduler at the top of every epoch instead of
once per task: each epoch starts the schedule again at its first step, so the learning rate never
decays within a task (it trains, on the wrong schedule)."""
import torch
import torch.nn as nn


def get_scheduler(optimizer, n_epochs):
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=n_epochs)  # <- GA206


def train_single_epoch(model, optimizer, x, y):
    for b in range(0, len(x), 8):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x[b : b + 8]), y[b : b + 8])
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
n_epochs = 4
for task in range(2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    for epoch in range(n_epochs):
        scheduler = get_scheduler(optimizer, n_epochs)
        train_single_epoch(model, optimizer, x, y)
        scheduler.step()
    print(task, optimizer.param_groups[0]["lr"])

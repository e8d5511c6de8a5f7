# runtime: trains
"""A training run in a function with epoch and batch loops, where the GradScaler is built inside the
batch loop: every step starts from the initial loss scale, so the scale never adapts (it trains,
with `update()`'s growth and back-off thrown away each step)."""
import torch
import torch.nn as nn


def train(lr, epochs=2, steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    for epoch in range(epochs):
        for i in range(steps):
            scaler = torch.amp.GradScaler("cpu", init_scale=256.0)  # <- GA206
            with torch.autocast("cpu", dtype=torch.float16):
                loss = nn.functional.mse_loss(model(x).float(), y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        print(epoch, loss.item(), scaler.get_scale())


train(0.01)
for generation in range(2):
    train(0.01 * (generation + 2))

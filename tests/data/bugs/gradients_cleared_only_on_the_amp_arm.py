# runtime: stale-grads
"""The AMP arm clears the gradients before its scaled backward; the plain arm, the one that runs
without `--amp`, never does. `args.amp` is the same in every iteration, so where the plain arm
runs nothing clears between steps and each step applies the sum of all gradients so far."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--amp", action="store_true")
args = parser.parse_args([])
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", enabled=args.amp)
for it in range(5):
    x, y = torch.randn(8, 6), torch.randn(8, 1)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.amp):
        loss = nn.functional.mse_loss(model(x), y)
    if args.amp:
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()  # <- GA201

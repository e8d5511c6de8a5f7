# runtime: trains
"""Mixed precision when a GradScaler is configured, plain steps otherwise: the two branches are
alternatives, not one after the other."""
import torch
import torch.nn as nn


def train(model, optimizer, batches, scaler=None):
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=scaler is not None):
            loss = nn.functional.cross_entropy(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


torch.manual_seed(2)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(6, 8), torch.randint(0, 4, (6,))) for _ in range(3)]
train(model, optimizer, batches)
train(model, optimizer, batches, scaler=torch.amp.GradScaler("cpu"))

# runtime: stale-grads
"""One `run_epoch` function serves training and validation (`train=True/False`) and mixed precision
or not (`scaler`): both training branches backpropagate, clip and step, and nothing ever clears the
gradients, so every step applies the sum of all gradients so far (after a text-recognition
project's trainer). The settings tested inside the loop hold for the whole run: they are not an
accumulation counter."""
import torch
import torch.nn as nn


def run_epoch(data, model, optimizer, criterion, train=True, scaler=None, max_grad_norm=2.0):
    model.train(train)
    losses = []
    for x, y in data:
        with torch.set_grad_enabled(train):
            loss = criterion(model(x), y)
        if train:
            params = [p for group in optimizer.param_groups for p in group["params"]]
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(params, max_norm=max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                nn.utils.clip_grad_norm_(params, max_norm=max_grad_norm)
                optimizer.step()  # <- GA201
        losses.append(loss.item())
    return sum(losses) / len(losses)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(4)]
for epoch in range(2):
    run_epoch(data, model, optimizer, nn.CrossEntropyLoss(), train=True)
    run_epoch(data, model, optimizer, nn.CrossEntropyLoss(), train=False)

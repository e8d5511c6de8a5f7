# runtime: trains
"""Gradient accumulation counted in a dict (`state["iter_num"] += 1`): the optimizer steps on every
fourth micro-batch, whose loss is divided by the accumulation count, and clears the gradients
after each step."""
import torch
import torch.nn as nn

ACCUM = 4


def fit(state, batches):
    model, optimizer = state["model"], state["optimizer"]
    for x, y in batches:
        state["iter_num"] += 1
        loss = nn.functional.mse_loss(model(x), y) / ACCUM
        loss.backward()
        if state["iter_num"] % ACCUM == 0:
            optimizer.step()
            optimizer.zero_grad()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
fit({"model": model, "optimizer": optimizer, "iter_num": 0}, [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(8)])

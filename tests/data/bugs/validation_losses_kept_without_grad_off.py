# runtime: graph-kept: history
"""A validation pass that keeps its losses in a list outliving the epochs, decorated by a project
function that only times the call (no grad mode of its own): each loss keeps its autograd graph, so
every epoch's validation graphs stay alive (the valid twin,
validation_losses_kept_under_a_decorator_factory, turns grad off)."""
import time

import torch
import torch.nn as nn


def timed():
    def decorate(fn):
        def run(*args, **kwargs):
            start = time.perf_counter()
            out = fn(*args, **kwargs)
            print(f"{fn.__name__}: {time.perf_counter() - start:.3f} s")
            return out

        return run

    return decorate


@timed()
def validate(model, data, history):
    for x, y in data:
        history.append(nn.functional.mse_loss(model(x), y))  # <- GA303
    return sum(history) / len(history)


torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]
history = []
for epoch in range(3):
    for x, y in data:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    print(float(validate(model, data, history)))

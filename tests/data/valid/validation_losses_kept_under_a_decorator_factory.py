# runtime: trains
"""A validation pass (after yolov5's `@smart_inference_mode()`) decorated by a project function that
returns `(torch.inference_mode if new else torch.no_grad)()(fn)`: the losses it keeps in a list that
outlives the epochs were computed with grad off, so they hold no graph (the bug twin,
validation_losses_kept_without_grad_off, has no such decorator)."""
import sys

import torch
import torch.nn as nn

NEW = sys.version_info >= (3, 9)


def smart_inference_mode():
    def decorate(fn):
        return (torch.inference_mode if NEW else torch.no_grad)()(fn)

    return decorate


@smart_inference_mode()
def validate(model, data, history):
    for x, y in data:
        history.append(nn.functional.mse_loss(model(x), y))
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

# reduction-of: few-shot@672de83a853c few_shot/maml.py:84 GA302
# false: GA302
# quiet: GA302
"""A MAML meta step for either order: each task's query loss is backpropagated with
`retain_graph=True` and kept; `if order == 1:` the optimizer steps (on gradients put in place by
hand) and the function returns; `elif order == 2:` the kept losses are averaged and
backpropagated, then the optimizer steps.

False finding: GA302 confirmed, "a step() in between changes parameters it saved, so that
backward() raises": the only step() before the order-2 backward is on the order-1 arm, which
returns; it never runs before that backward in the same call. An in-place change on the other arm
of a condition the backward runs under does not precede it.

Verified with torch 2.13 (CPU): both orders, with 0, 1 and 2 inner steps (with none, the query
loss saves the parameters themselves), run two epochs of meta steps, every backward succeeding.
Prints OK.
"""
import os
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 8)
        self.logits = nn.Linear(8, 3)

    def forward(self, x):
        return self.logits(F.relu(self.hidden(x)))

    def functional_forward(self, x, weights):
        x = F.relu(F.linear(x, weights["hidden.weight"], weights["hidden.bias"]))
        return F.linear(x, weights["logits.weight"], weights["logits.bias"])


def meta_step(model, optimiser, loss_fn, x, y, order, inner_steps, train):
    task_losses = []
    for meta_batch in x:
        fast = OrderedDict(model.named_parameters())
        for _ in range(inner_steps):
            loss = loss_fn(model.functional_forward(meta_batch, fast), y)
            grads = torch.autograd.grad(loss, fast.values(), create_graph=order == 2)
            fast = OrderedDict((n, p - 0.4 * g) for (n, p), g in zip(fast.items(), grads))
        loss = loss_fn(model.functional_forward(meta_batch, fast), y)
        loss.backward(retain_graph=True)
        task_losses.append(loss)
    if order == 1:
        if train:
            optimiser.step()
            optimiser.zero_grad()
        return torch.stack(task_losses).mean()
    elif order == 2:
        optimiser.zero_grad()
        meta_loss = torch.stack(task_losses).mean()
        if train:
            meta_loss.backward()
            optimiser.step()
        return meta_loss
    else:
        raise ValueError("order must be 1 or 2")


def fit(model, optimiser, loss_fn, epochs, batches, fit_function, fit_function_kwargs):
    for epoch in range(epochs):
        for x, y in batches:
            loss = fit_function(model, optimiser, loss_fn, x, y, **fit_function_kwargs)


def run(order, inner_steps):
    torch.manual_seed(0)
    model = Net()
    batches = [(torch.randn(2, 4, 6), torch.arange(4) % 3) for _ in range(3)]
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    kwargs = {"order": order, "inner_steps": inner_steps, "train": True}
    fit(model, optimiser, nn.CrossEntropyLoss(), 2, batches, meta_step, kwargs)


if os.environ.get("MAML_ORDER"):
    run(int(os.environ["MAML_ORDER"]), int(os.environ.get("INNER_STEPS", "1")))
else:
    for order in (1, 2):
        for inner_steps in (0, 1, 2):
            run(order, inner_steps)
print("OK")

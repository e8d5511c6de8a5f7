# reduction-of: few-shot@672de83a853c few_shot/maml.py:88 GA303
# false: GA303
# quiet: GA303
"""The MAML meta step of `meta_batch_predictions_list.py` as a library function: the model, the
optimiser and the loss function are its arguments, and the meta optimiser steps after the task loop.
The optimiser is picked by name from the environment, so the engine does not know it: its
`.step()` after the task loop still marks the task loop as the inside of one update.

False finding: GA303 at `task_predictions.append(y_pred)` (memory grows until the loop ends). The
list is local to one call, filled by the tasks of one update, and returned: the graphs it holds die
with the caller's use of it.

Verified with torch 2.13 (CPU): a weak reference to every prediction shows that none outlives the
call's update. Prints OK.
"""
import gc
import os
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F

refs = []


def meta_gradient_step(model, optimiser, loss_fn, tasks, inner_lr=0.4):
    task_predictions = []
    task_losses = []
    for xs, ys, xq, yq in tasks:
        fast = dict(model.named_parameters())
        grads = torch.autograd.grad(loss_fn(F.linear(xs, fast["weight"], fast["bias"]), ys), list(fast.values()))
        fast = {n: p - inner_lr * g for (n, p), g in zip(fast.items(), grads)}
        logits = F.linear(xq, fast["weight"], fast["bias"])
        loss = loss_fn(logits, yq)
        y_pred = logits.softmax(dim=1)
        refs.append(weakref.ref(y_pred))
        task_predictions.append(y_pred)
        task_losses.append(loss)
    optimiser.zero_grad()
    meta_loss = torch.stack(task_losses).mean()
    meta_loss.backward()
    optimiser.step()
    return meta_loss, torch.cat(task_predictions)


def check():
    torch.manual_seed(0)
    model = nn.Linear(6, 3)
    optimiser = getattr(torch.optim, os.environ.get("OPTIMISER", "SGD"))(model.parameters(), lr=0.1)
    tasks = [(torch.randn(5, 6), torch.arange(5) % 3, torch.randn(9, 6), torch.arange(9) % 3) for _ in range(3)]
    for _ in range(3):
        meta_loss, preds = meta_gradient_step(model, optimiser, F.cross_entropy, tasks)
        meta_loss.item(), preds.argmax(1)
    del meta_loss, preds
    gc.collect()
    assert not any(r() is not None for r in refs)
    print("OK")


if __name__ == "__main__":
    check()

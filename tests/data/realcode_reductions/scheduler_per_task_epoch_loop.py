# reduction-of: mammoth@e75a491c69fd utils/schedulers.py:28 GA206
# false: GA206
# quiet: GA206
"""A continual-learning run: for each task a helper rebuilds the optimizer and a step-count scheduler,
then the task's epochs run and the scheduler steps once per epoch.

The real code (mammoth utils/training.py and utils/schedulers.py): `for cur_task in ...:` calls
`scheduler = get_scheduler(model, args, reload_optim=True)`, which reloads `model.opt` and builds
`MultiStepLR(...)` or `CosineAnnealingLR(model.opt, T_max=args.n_epochs)`; the epoch loop under it
calls `train_single_epoch(...)`, which steps the optimizer per batch and the scheduler per epoch.

False finding: GA206 at the scheduler, "built anew in every iteration of the training loop: its step
count restarts each time, so the schedule never gets past its beginning". The loop around the
construction is the task loop; every step of the scheduler runs in the epoch loop inside it, so
within a task the schedule runs through all of its epochs (a reset per task is the design). The
same holds of the optimizer, picked by name from torch.optim and rebuilt per task: once the engine
knew such an optimizer (`getattr(torch.optim, name)`), it drew GA206 at it too.

Verified with torch 2.13 (CPU): within each task the learning rate follows the whole cosine
schedule down to its minimum, and the model trains. Prints OK.
"""
import sys

import torch
import torch.nn as nn


class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)

    def get_optimizer(self, name="sgd"):
        names = {n.lower(): n for n in dir(torch.optim)}
        return getattr(torch.optim, names[name])(self.parameters(), lr=0.1)  # chosen by a setting

    def observe(self, x, y):
        self.opt.zero_grad()
        loss = nn.functional.mse_loss(self(x), y)
        loss.backward()
        self.opt.step()
        return loss.item()


def get_scheduler(model, n_epochs):
    model.opt = model.get_optimizer()  # reloaded at each task
    return torch.optim.lr_scheduler.CosineAnnealingLR(model.opt, T_max=n_epochs * 4 if mode == "iter" else n_epochs)


def train_single_epoch(model, x, y, scheduler):
    for b in range(0, len(x), 8):
        model.observe(x[b : b + 8], y[b : b + 8])
        if mode == "iter":
            scheduler.step()
    if mode == "epoch":
        scheduler.step()


torch.manual_seed(0)
model = Learner()
n_epochs = 4
mode = sys.argv[1] if len(sys.argv) > 1 else "epoch"  # or "iter"
for task in range(2):
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    scheduler = get_scheduler(model, n_epochs)
    rates = []
    first = nn.functional.mse_loss(model(x), y).item()
    for epoch in range(n_epochs):
        rates.append(model.opt.param_groups[0]["lr"])
        train_single_epoch(model, x, y, scheduler)
    assert rates[0] == 0.1 and rates[-1] < rates[1] < rates[0], rates  # the schedule runs its course
    assert model.opt.param_groups[0]["lr"] < 1e-12, model.opt.param_groups[0]["lr"]
    assert nn.functional.mse_loss(model(x), y).item() < first
print("OK")

# runtime: no-update: model
"""A trainer whose step is made in losses.py (`losses.get_step_fn(...)`), called from `train()`,
which a launcher starts by name (absl's `app.run(main)` in the original): `train` holds no
backward() or step() itself, only calls of the step factory. The finding is in losses.py."""
import torch
import torch.nn as nn

import losses

model = nn.Sequential(nn.Linear(4, 16), nn.SiLU(), nn.Linear(16, 4))


def train(n_iters):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    state = dict(optimizer=optimizer, model=model, step=0)
    optimize_fn = losses.get_optimize_fn(lr=1e-3, warmup=0, grad_clip=1.0)
    train_step_fn = losses.get_step_fn(train=True, optimize_fn=optimize_fn)
    for _ in range(n_iters):
        batch = torch.randn(8, 4)
        train_step_fn(state, batch)


torch.manual_seed(0)
globals()["train"](3)  # started by name, as a launcher would

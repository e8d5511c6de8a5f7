"""Gradient accumulation as MAE writes it: `optimizer.zero_grad()` under `if (i + 1) % accum_iter ==
0:`, and the step inside a loss scaler's `__call__` under its `update_grad` argument, which the loop
computes from the same counter. The step does not run every iteration, so the clear under the
counter's condition is the accumulation, not a clear skipped in some iterations."""
import torch
import torch.nn as nn


class LossScaler:
    def __call__(self, loss, optimizer, parameters, update_grad=True):
        loss.backward()
        if update_grad:
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
            optimizer.step()


model = nn.Linear(8, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = LossScaler()
accum_iter = 4
optimizer.zero_grad()
for i in range(16):
    x, y = torch.randn(4, 8), torch.randn(4, 1)
    loss = nn.functional.mse_loss(model(x), y) / accum_iter
    scaler(loss, optimizer, model.parameters(), update_grad=(i + 1) % accum_iter == 0)
    if (i + 1) % accum_iter == 0:
        optimizer.zero_grad()

# runtime: trains
"""As bugs/clip_every_micro_batch_step_on_counter_reset.py, with lingua's fix: the clip runs once,
inside `if train_state.acc_step == 0:`, on the accumulated gradient, just before the step."""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class TrainState:
    step: int = 0
    acc_step: int = 0


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
grad_acc_steps = 4
train_state = TrainState()
for i in range(16):
    train_state.acc_step = (train_state.acc_step + 1) % grad_acc_steps
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    loss = nn.functional.mse_loss(model(x), y) / grad_acc_steps
    loss.backward()
    if train_state.acc_step == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        optimizer.zero_grad()
        train_state.step += 1

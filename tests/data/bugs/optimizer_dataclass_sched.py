# runtime: warning: lr_scheduler.step()
"""Optimizer and scheduler kept in a dataclass of training state; the scheduler is stepped at the
top of each iteration, before the optimizer."""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class State:
    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    step: int = 0


def train(state: State, batches):
    for x, y in batches:
        state.scheduler.step()  # <- GA207
        loss = nn.functional.cross_entropy(state.model(x), y)
        state.optimizer.zero_grad()
        loss.backward()
        state.optimizer.step()
        state.step += 1


torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
state = State(model, opt, torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9))
train(state, [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(3)])

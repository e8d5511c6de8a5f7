# runtime: warning: lr_scheduler.step()
"""A detector's trainer with a warmup schedule of its own (a subclass of torch's _LRScheduler that
only says how the rate moves) over an optimizer made by a factory, both handed to a training
function that steps the schedule at the top of each iteration, before the optimizer."""
from bisect import bisect_right

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import _LRScheduler


class WarmupMultiStepLR(_LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, warmup_iters=2, last_epoch=-1):
        self.milestones = milestones
        self.gamma = gamma
        self.warmup_iters = warmup_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        factor = 1.0
        if self.last_epoch < self.warmup_iters:
            factor = (self.last_epoch + 1) / (self.warmup_iters + 1)
        return [base * factor * self.gamma ** bisect_right(self.milestones, self.last_epoch) for base in self.base_lrs]


def make_optimizer(model, lr):
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def do_train(model, loader, optimizer, scheduler):
    for images, targets in loader:
        scheduler.step()  # <- GA207
        loss = nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = make_optimizer(model, 0.05)
scheduler = WarmupMultiStepLR(optimizer=optimizer, milestones=[3])
loader = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(4)]
do_train(model, loader, optimizer, scheduler)

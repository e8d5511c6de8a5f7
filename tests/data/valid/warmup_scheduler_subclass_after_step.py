# runtime: trains
"""The same warmup schedule of the project's own, stepped after the optimizer; and a schedule class
that writes the rate itself in a step() of its own (not torch's stepping: nothing to order)."""
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


class ManualWarmup(_LRScheduler):
    def __init__(self, optimizer, warmup_iters=2):
        self.warmup_iters = warmup_iters
        self.count = 0
        super().__init__(optimizer)

    def step(self, epoch=None):
        self.count += 1
        for group in self.optimizer.param_groups:
            group["lr"] = 0.05 * min(1.0, self.count / self.warmup_iters)


def do_train(model, loader, optimizer, scheduler, warmup):
    for images, targets in loader:
        warmup.step()
        loss = nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = WarmupMultiStepLR(optimizer=optimizer, milestones=[3])
warmup = ManualWarmup(optimizer)
loader = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(4)]
do_train(model, loader, optimizer, scheduler, warmup)

# runtime: warning: lr_scheduler.step()
# confidence: suspicious
"""A warm-up schedule of the project's own, stepped in the batch loop while `epoch <= args.warm`,
before the optimizer steps: the condition does not change between the batch loop's iterations, so
where it holds the schedule moves first from the first batch on (torch warns, and the warm-up
starts one step late). Whether it holds depends on the command line: suspicious."""
import argparse

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import _LRScheduler


class WarmUpLR(_LRScheduler):
    def __init__(self, optimizer, total_iters, last_epoch=-1):
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base_lr * self.last_epoch / (self.total_iters + 1e-8) for base_lr in self.base_lrs]


def train(epoch):
    net.train()
    for _ in range(5):
        if epoch <= args.warm:
            warmup_scheduler.step()  # <- GA207
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-warm", type=int, default=1)
    args = parser.parse_args([])
    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    train_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 3], gamma=0.2)
    warmup_scheduler = WarmUpLR(optimizer, 5 * args.warm)
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    for epoch in range(1, 4):
        if epoch > args.warm:
            train_scheduler.step()
        train(epoch)

# runtime: trains
"""Deliberate accumulation whose step is decided by the caller: a counter reset after each step
gives `optimize(x, apply)` its flag (a super-resolution trainer's `optimize_parameters(..., apply_gradient)`).
The first iterations only accumulate; the step applies their sum, then clears. No backward() runs
before the loop: an earlier iteration that did not step is part of the accumulation."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, accum):
        self.net = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.accum = accum

    def optimize(self, x, apply):
        loss = self.net(x).pow(2).mean() / self.accum
        loss.backward()
        if apply:
            self.opt.step()
            self.opt.zero_grad()


torch.manual_seed(0)
trainer = Trainer(4)
count = 0
for i in range(16):
    count += 1
    apply = count >= trainer.accum
    if apply:
        count = 0
    trainer.optimize(torch.randn(8, 4), apply)

# runtime: trains
"""A Trainer with gradient accumulation: the loss is divided by the accumulation count, the step,
zero_grad and scheduler run every `accum` micro-batches, the scheduler after the optimizer."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, accum=2, lr=1e-2):
        self.model, self.accum = model, accum
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=2, gamma=0.5)
        self.micro = 0

    def train_step(self, x, y):
        loss = nn.functional.smooth_l1_loss(self.model(x), y) / self.accum
        loss.backward()
        self.micro += 1
        if self.micro % self.accum == 0:
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            self.opt.zero_grad()
            self.sched.step()
        return loss.item() * self.accum


torch.manual_seed(0)
trainer = Trainer(nn.Linear(4, 1))
for i in range(6):
    trainer.train_step(torch.randn(5, 4), torch.randn(5, 1))

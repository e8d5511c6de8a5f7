# runtime: trains
"""Transformers' old Trainer in small: the options object is kept as `self.args`; mixed precision
(`use_amp`, with a GradScaler) is switched on in the constructor only when no engine is asked
for (`args.fp16 and not args.engine`), and the engine object, which steps its own optimizer, is
made in `train()` under `if self.args.engine:`. The scaled backward (under `if self.use_amp:`) and
the engine's plain step (under `if self.engine:`) never meet in one run: `use_amp` implies the
option is off, the engine implies it is on. Every combination of the options trains with finite
weights."""
import argparse

import torch
import torch.nn as nn


class Engine:
    def __init__(self, model):
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args
        self.engine = None
        self.use_amp = False
        if args.fp16 and not args.engine:
            self.use_amp = True
            self.scaler = torch.amp.GradScaler("cpu")

    def training_step(self, x, y):
        if self.use_amp:
            with torch.autocast("cpu", dtype=torch.float16):
                out = self.model(x)
            loss = nn.functional.mse_loss(out.float(), y)
            self.scaler.scale(loss).backward()
        else:
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()
        return loss.detach()

    def train(self, steps=5):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        if self.args.engine:
            self.engine = Engine(self.model)
        for _ in range(steps):
            self.training_step(torch.randn(16, 8), torch.randn(16, 1))
            if self.engine:
                self.engine.step()
            elif self.use_amp:
                self.scaler.step(optimizer)
                self.scaler.update()
                optimizer.zero_grad()
            else:
                optimizer.step()
                optimizer.zero_grad()


parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--engine", action="store_true")
for argv in ([], ["--fp16"], ["--engine"], ["--fp16", "--engine"]):
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    trainer = Trainer(nn.Linear(8, 1), args)
    trainer.train()
    assert torch.isfinite(trainer.model.weight).all()

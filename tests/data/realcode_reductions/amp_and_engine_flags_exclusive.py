# reduction-of: LoRA@c4593f060e6a examples/NLU/src/transformers/trainer.py:1073 GA409
# false: GA409
"""A trainer with two exclusive settings, as transformers' Trainer had: mixed precision
(`use_amp`, with a GradScaler) is switched on only when no engine object (DeepSpeed) is given, and
the engine steps its own optimizer. The scaled backward runs under `if self.use_amp:`, the engine's
plain `optimizer.step()` under `if self.engine:`.

False finding: GA409 confirmed at the engine's step(): "the loss was multiplied by the GradScaler's
scale, but the optimizer steps directly". That needs `use_amp` and `engine` in one run, and the
constructor never sets both. The engine does not relate the two settings; a finding whose calls run
under two different settings is now suspicious and says which settings it needs together.

Verified with torch 2.13 (CPU, float16 autocast): with every combination of the flags the trainer
takes steps and the weights stay finite. Prints OK.
"""
import torch
import torch.nn as nn


class Engine:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


class Trainer:
    def __init__(self, model, fp16, engine):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.engine = Engine(self.optimizer) if engine else None
        self.use_amp = False
        if fp16 and not engine:
            self.use_amp = True
            self.scaler = torch.amp.GradScaler("cpu")

    def train(self, steps=3):
        for _ in range(steps):
            x, y = torch.randn(4, 3), torch.randn(4, 1)
            if self.use_amp:
                with torch.autocast("cpu", dtype=torch.float16):
                    out = self.model(x)
                loss = nn.functional.mse_loss(out.float(), y)
                self.scaler.scale(loss).backward()
            else:
                loss = nn.functional.mse_loss(self.model(x), y)
                loss.backward()
            if self.engine:
                self.engine.step()
            elif self.use_amp:
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad()
            else:
                self.optimizer.step()
                self.optimizer.zero_grad()


for fp16, engine in ((True, False), (False, True), (True, True), (False, False)):
    torch.manual_seed(0)
    t = Trainer(nn.Linear(3, 1), fp16, engine)
    before = t.model.weight.detach().clone()
    t.train()
    assert torch.isfinite(t.model.weight).all() and not torch.equal(before, t.model.weight)
print("OK")

# runtime: nonfinite
# confidence: suspicious
"""A trainer with an engine object that steps its own optimizer, and mixed precision switched on by
another setting. The constructor turns `use_amp` on whenever `fp16` is given, engine or not, so a
run with both scales the loss (`scaler.scale(loss).backward()`) and lets the engine step the plain
optimizer: the gradients are applied 65536 times too large and the weights blow up. The two
settings are independent here (suspicious: it takes a run that sets both; the default one does).
The twin where `use_amp` is set only without an engine is quiet."""
import os

import torch
import torch.nn as nn


class Engine:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def step(self):
        self.optimizer.step()  # <- GA409
        self.optimizer.zero_grad()


class Trainer:
    def __init__(self, model, fp16, engine):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.engine = Engine(self.optimizer) if engine else None
        self.use_amp = False
        if fp16:
            self.use_amp = True
            self.scaler = torch.amp.GradScaler("cpu")

    def train(self, steps=5):
        for _ in range(steps):
            x, y = torch.randn(16, 8), torch.randn(16, 1)
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


torch.manual_seed(0)
# the launcher's settings: mixed precision and the engine, both on by default
trainer = Trainer(nn.Linear(8, 1), os.environ.get("FP16", "1") == "1", os.environ.get("ENGINE", "1") == "1")
trainer.train()

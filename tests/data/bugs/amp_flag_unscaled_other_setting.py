# runtime: no-update: model
# confidence: suspicious
"""Mixed precision under one setting (`use_amp`), loss scaling under another (`scale_loss`, with a
sharded GradScaler the engine has no model of), as a trainer with separate options for autocast
and for scaling: with autocast on and scaling off, the float16 backward runs unscaled and
gradients below ~6e-8 underflow to exactly 0. Adam follows a gradient of any size, so without
autocast the same run trains; with it every gradient is 0 and nothing changes. Unlike a test made
twice on one setting, nothing ties the two settings together (suspicious: the options and the
gradients' size decide)."""
import os

import torch
import torch.nn as nn
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler


class Trainer:
    def __init__(self, model, use_amp, scale_loss):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        self.use_amp = use_amp
        self.scale_loss = scale_loss
        if scale_loss:
            self.scaler = ShardedGradScaler("cpu")

    def compute_loss(self, x, y):
        # a loss whose gradients are tiny (a very small weight on a well-fitted term)
        return nn.functional.mse_loss(self.model(x).float(), y) * 1e-9

    def training_step(self, x, y):
        if self.use_amp:
            with torch.autocast("cpu", dtype=torch.float16):  # <- GA409
                loss = self.compute_loss(x, y)
        else:
            loss = self.compute_loss(x, y)
        if self.scale_loss:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        self.optimizer.zero_grad()


torch.manual_seed(0)
model = nn.Linear(3, 1)
# the two settings, as a launcher passes them: autocast on, loss scaling off
trainer = Trainer(model, os.environ.get("AMP", "1") == "1", os.environ.get("SCALE_LOSS", "0") == "1")
for _ in range(3):
    trainer.training_step(torch.randn(4, 3) * 1e-3, torch.zeros(4, 1))

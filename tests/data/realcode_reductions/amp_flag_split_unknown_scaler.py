# reduction-of: LoRA@c4593f060e6a examples/NLU/src/transformers/trainer.py:1456 GA409
# false: GA409
# quiet: GA409
"""Mixed precision switched by one attribute set in `__init__`, tested twice in the training step:
`if self.use_amp: with autocast(): loss = ...` (else the same loss without autocast), the loss
divided for accumulation under another setting, then `if self.use_amp:
self.scaler.scale(loss).backward()` else `loss.backward()`, as transformers' Trainer had. The
scaler is one the engine has no model of (the real code: fairscale's ShardedGradScaler, or the CUDA
GradScaler, chosen at run time; the training step analysed with unknown arguments).

False finding: GA409 suspicious at the autocast: "float16 autocast in a training step with no
GradScaler". It joined the two arms of the first test and sent the autocast loss down the plain
`loss.backward()` arm of the second. The flag keeps its value through the step (the function never
assigns it), so the plain backward only ever sees the loss made without autocast; the autocast
loss is always scaled. The engine now runs the rest of the step inside each arm of the first test
when the rest tests the flag again.

Verified with torch 2.13 (CPU, float16 autocast, a one-process gloo group for the sharded scaler):
with mixed precision on and off the trainer takes steps and the weights stay finite. Prints OK.
"""
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler


class Trainer:
    def __init__(self, model, fp16, accumulation=1):
        self.model = model
        self.accumulation = accumulation
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.use_amp = False
        if fp16:
            self.use_amp = True
            self.scaler = ShardedGradScaler("cpu")

    def compute_loss(self, x, y):
        return nn.functional.mse_loss(self.model(x).float(), y)

    def training_step(self, x, y):
        if self.use_amp:
            with torch.autocast("cpu", dtype=torch.float16):
                loss = self.compute_loss(x, y)
        else:
            loss = self.compute_loss(x, y)
        if self.accumulation > 1:
            loss = loss / self.accumulation
        if self.use_amp:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        return loss.detach()

    def train(self, steps=3):
        for _ in range(steps):
            x, y = torch.randn(4, 3), torch.randn(4, 1)
            self.training_step(x, y)
            if self.use_amp:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()


# the sharded scaler reduces its inf check over a process group: one process here
dist.init_process_group("gloo", init_method=f"file://{tempfile.mktemp()}", rank=0, world_size=1)
for fp16, accumulation in ((True, 1), (False, 1), (True, 2)):
    torch.manual_seed(0)
    t = Trainer(nn.Linear(3, 1), fp16, accumulation)
    before = t.model.weight.detach().clone()
    t.train()
    assert torch.isfinite(t.model.weight).all() and not torch.equal(before, t.model.weight)
dist.destroy_process_group()
print("OK")

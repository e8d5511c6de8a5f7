# runtime: trains
"""Gradient accumulation under a GradScaler done right: the loss is divided by the number of
micro-batches, unscale_ before clipping, step/update/zero_grad and the scheduler every N."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TrainConfig:
    accum_steps: int = 4
    lr: float = 1e-3
    max_norm: float = 1.0
    micro_batches: int = 8


def train(model, cfg: TrainConfig):
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.5, total_iters=4)
    scaler = torch.amp.GradScaler("cpu")
    optimizer.zero_grad()
    for i in range(cfg.micro_batches):
        x, y = torch.randn(4, 10), torch.randint(0, 3, (4,))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y) / cfg.accum_steps
        scaler.scale(loss).backward()
        if (i + 1) % cfg.accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            scheduler.step()


torch.manual_seed(0)
train(nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3)), TrainConfig())

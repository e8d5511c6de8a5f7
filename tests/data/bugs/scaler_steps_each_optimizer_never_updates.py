# runtime: error: step() has already been called since the last update()
"""One GradScaler for two optimizers: each is stepped through the scaler after the scaled backward,
but the scaler is never updated, so the next iteration's first step raises."""
import torch
import torch.nn as nn
from torch.amp import GradScaler


class PartsOptimizer:
    def __init__(self, unet, text_encoder):
        self.optimizers = [
            torch.optim.AdamW(unet.parameters(), lr=1e-2),
            torch.optim.AdamW(text_encoder.parameters(), lr=1e-2),
        ]
        self.scaler = GradScaler("cpu", enabled=True)

    def step(self, loss):
        self.scaler.scale(loss).backward()
        for optimizer in self.optimizers:
            self.scaler.step(optimizer)  # <- GA409
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=True)


torch.manual_seed(0)
unet, text_encoder = nn.Linear(4, 4), nn.Linear(4, 4)
opt = PartsOptimizer(unet, text_encoder)
for _ in range(3):
    opt.step(unet(text_encoder(torch.randn(2, 4))).pow(2).mean())

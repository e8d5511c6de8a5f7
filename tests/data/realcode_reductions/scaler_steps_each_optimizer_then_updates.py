# reduction-of: EveryDream2trainer@562c4341137d optimizer/optimizers.py:95 GA409
# false: GA409
"""A fine-tuning wrapper with one optimizer per model part (the UNet's, the text encoder's) and one
GradScaler: after the scaled backward it steps each optimizer through the scaler in a loop, then
updates the scaler once.

The real code (EveryDream2trainer `EveryDreamOptimizer.step`): `for optimizer in self.optimizers:
self.scaler.step(optimizer)`, then `self.scaler.update()`.

False finding: GA409 confirmed at `self.scaler.step(optimizer)`, "runs every iteration but
`scaler.update()` never does": the iteration looked at was the loop over the optimizers. torch
keeps the step state per optimizer, so each optimizer stepping once before the one update is the
documented way to use one scaler with several optimizers.

Verified with torch 2.13 (CPU, GradScaler enabled): three steps run, both parts train. Prints OK.
"""
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
            self.scaler.step(optimizer)
        self.scaler.update()
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    unet, text_encoder = nn.Linear(4, 4), nn.Linear(4, 4)
    before = [p.detach().clone() for p in list(unet.parameters()) + list(text_encoder.parameters())]
    opt = PartsOptimizer(unet, text_encoder)
    for _ in range(3):
        opt.step(unet(text_encoder(torch.randn(2, 4))).pow(2).mean())
    after = list(unet.parameters()) + list(text_encoder.parameters())
    assert all(not torch.equal(b, a) for b, a in zip(before, after))
    print("OK")

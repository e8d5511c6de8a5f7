# runtime: trains
"""A model trained with an exponential moving average copy for evaluation: the shadow weights are
updated in place under torch.no_grad() from the detached parameters after each step."""
import copy

import torch
import torch.nn as nn


class EMA:
    def __init__(self, model, decay=0.99):
        self.shadow = copy.deepcopy(model).eval()
        for p in self.shadow.parameters():
            p.requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 10), nn.GELU(), nn.Linear(10, 1))
ema = EMA(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    x, y = torch.randn(8, 5), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model)
with torch.no_grad():
    val = nn.functional.mse_loss(ema.shadow(torch.randn(8, 5)), torch.randn(8, 1))

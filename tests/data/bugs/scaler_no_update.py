# runtime: error: step() has already been called since the last update()
"""Mixed precision with a GradScaler whose update() was forgotten."""
import torch
import torch.nn as nn


class Runner:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.scaler = torch.amp.GradScaler("cpu")

    def step(self, x, y):
        self.opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            pred = self.model(x)
        loss = nn.functional.mse_loss(pred.float(), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)  # <- GA409
        return loss.item()


torch.manual_seed(0)
runner = Runner()
for i in range(3):
    runner.step(torch.randn(8, 6), torch.randn(8, 1))

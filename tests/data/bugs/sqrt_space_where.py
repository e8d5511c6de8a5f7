# runtime: nonfinite
"""A count regressor trained in square-root space (variance stabilising for counts); negative
predictions are guarded with torch.where, but sqrt of the discarded branch is NaN and its gradient
poisons the weights."""
import torch
import torch.nn as nn


def sqrt_space_mse(pred, target):
    root = torch.where(pred > 0, torch.sqrt(pred), torch.zeros_like(pred))  # <- GA405
    return ((root - torch.sqrt(target)) ** 2).mean()


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def train_epoch(model, opt, loader):
    for x, counts in loader:
        opt.zero_grad()
        loss = sqrt_space_mse(model(x), counts)
        loss.backward()
        opt.step()


torch.manual_seed(0)
model = Regressor()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [(torch.randn(20, 3), torch.randint(0, 10, (20,)).float()) for _ in range(3)]
train_epoch(model, opt, loader)

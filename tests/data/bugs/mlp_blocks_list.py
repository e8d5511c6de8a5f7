# runtime: no-update: model.blocks
"""A residual MLP whose blocks are kept in a Python list: model.parameters() never yields them, so
the optimizer skips them (and .to(device) would not move them)."""
import torch
import torch.nn as nn


class ResidualMLP(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.inp = nn.Linear(4, dim)
        self.blocks = [nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)]  # <- GA109
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


def train(model, optimizer, loss_fn, steps):
    for step in range(steps):
        x = torch.rand(32, 4)
        y = (x ** 2).sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = ResidualMLP(dim=16, depth=3)
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
print(train(model, optimizer, nn.MSELoss(), steps=5))

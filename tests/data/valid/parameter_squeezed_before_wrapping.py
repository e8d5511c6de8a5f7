# runtime: trains
"""The same periodic activation with the squeeze inside the Parameter: the module keeps the leaf,
`.parameters()` lists it, and the optimizer trains it. A derived tensor computed from a registered
parameter in __init__ (a transposed view for logging) is not a weight."""
import torch
import torch.nn as nn


class Periodic(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.alpha = nn.Parameter((torch.rand(1, channels) + 0.5).squeeze())
        self.scale = nn.Parameter(torch.ones(channels))
        self.initial = self.scale.detach().clone()

    def forward(self, x):
        return self.scale * (x + torch.sin(self.alpha * x) ** 2 / self.alpha)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), Periodic(6), nn.Linear(6, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# runtime: no-update: act.alpha
"""A periodic activation with a learned frequency per channel: the frequency is made a Parameter
and squeezed afterwards, so the module keeps the squeezed copy, a non-leaf that `.parameters()`
never lists. The optimizer gets only the linear layer; the frequency stays what it was."""
import torch
import torch.nn as nn


class Periodic(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.alpha = nn.Parameter(torch.rand(1, channels) + 0.5).squeeze()  # <- GA113

    def forward(self, x):
        return x + torch.sin(self.alpha * x) ** 2 / self.alpha


torch.manual_seed(0)
act = Periodic(6)
model = nn.Sequential(nn.Linear(4, 6), act, nn.Linear(6, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

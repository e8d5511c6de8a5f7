# runtime: no-update: regressor
"""Count regression trained on rounded predictions, patched up with requires_grad_()."""
import torch
import torch.nn as nn

torch.manual_seed(5)
regressor = nn.Sequential(nn.Linear(4, 16), nn.Softplus(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(regressor.parameters(), lr=0.01)
for _ in range(3):
    x = torch.randn(12, 4)
    counts = torch.poisson(torch.full((12,), 3.0))
    predicted = torch.round(regressor(x).squeeze(-1)).requires_grad_()  # <- GA106
    loss = ((predicted - counts) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

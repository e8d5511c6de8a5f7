# runtime: trains
"""The valid look-alike of per_view_weight_through_builtin_abs: the per-view weight (builtin `abs()`,
unary minus) multiplies the per-view similarities before the mean, so the loss is a scalar."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 8)
target = nn.functional.normalize(torch.randn(1, 8), dim=-1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for _ in range(3):
    x = torch.randn(4, 3)
    azimuth = torch.rand(4) * 360 - 180
    weight = 10 * (1 - abs(azimuth) / 180)
    loss = (-(model(x) * target).sum(-1) * weight).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

# runtime: error: grad can be implicitly created only for scalar outputs
"""A guidance loss (after stable-dreamfusion's CLIP guidance) negated with a unary minus and scaled by
a per-view weight written with the builtin `abs()`: both keep their operand's shape, so the weight of
shape [4] makes the loss a vector of 4 and backward() without `gradient=` raises."""
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
    loss = -(model(x) * target).sum(-1).mean() * weight
    loss.backward()  # <- GA305
    optimizer.step()
    optimizer.zero_grad()

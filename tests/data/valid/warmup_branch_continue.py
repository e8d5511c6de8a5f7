# runtime: trains
"""A warm-up phase that backpropagates a pixel loss and `continue`s; after warm-up a combined
loss built from the same generator output is backpropagated instead (never both)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
generator = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 5))
critic = nn.Linear(5, 1).requires_grad_(False)
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
warmup = 2
for step in range(4):
    x, target = torch.randn(8, 5), torch.randn(8, 5)
    opt_g.zero_grad()
    out = generator(x)
    loss_pixel = F.l1_loss(out, target)
    if step < warmup:
        loss_pixel.backward()
        opt_g.step()
        continue
    loss = loss_pixel + 0.01 * critic(out).mean()
    loss.backward()
    opt_g.step()

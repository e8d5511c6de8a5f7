# runtime: trains
"""Two task losses backpropagated separately through a shared encoder, the first with
retain_graph=True because the second reuses the graph in the same iteration."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
head_a, head_b = nn.Linear(16, 3), nn.Linear(16, 1)
opt = torch.optim.Adam([*encoder.parameters(), *head_a.parameters(), *head_b.parameters()], lr=1e-3)
for step in range(3):
    x, ya, yb = torch.randn(8, 8), torch.randint(0, 3, (8,)), torch.randn(8)
    h = encoder(x)
    opt.zero_grad()
    loss_a = F.cross_entropy(head_a(h), ya)
    loss_a.backward(retain_graph=True)
    loss_b = F.mse_loss(head_b(h).squeeze(-1), yb)
    loss_b.backward()
    opt.step()

# runtime: no-update: heads
"""Multi-horizon forecasting: one loss per horizon, averaged through a fresh tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
encoder = nn.GRU(3, 16, batch_first=True)
heads = nn.ModuleList([nn.Linear(16, 1) for _ in range(3)])
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(heads.parameters()), lr=1e-3)
for step in range(3):
    seq, targets = torch.randn(8, 12, 3), torch.randn(8, 3)
    _, h = encoder(seq)
    losses = []
    for k, head in enumerate(heads):
        losses.append(F.mse_loss(head(h[-1]).squeeze(-1), targets[:, k]))
    loss = torch.FloatTensor(losses).mean().requires_grad_()  # <- GA104
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

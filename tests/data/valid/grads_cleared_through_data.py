# runtime: trains
"""Gradients cleared by hand the pre-0.4 way, `p.grad.data.zero_()` for each parameter, before
every backward(): the `.data` of a gradient is that gradient, so this clears as zero_grad() does."""
import torch
import torch.nn as nn

torch.manual_seed(0)
X, Y = torch.randn(32, 4), torch.randn(32, 1)
model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(5):
    for p in model.parameters():
        if p.grad is not None:
            p.grad.data.zero_()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    optimizer.step()

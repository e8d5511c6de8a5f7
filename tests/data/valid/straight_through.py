# runtime: trains
"""A binarised autoencoder bottleneck trained with a straight-through estimator: round() in the
forward, the identity gradient in the backward."""
import torch
import torch.nn as nn


class BinaryAE(nn.Module):
    def __init__(self, dim=12, code=6):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, code), nn.Sigmoid())
        self.dec = nn.Linear(code, dim)

    def forward(self, x):
        soft = self.enc(x)
        hard = soft + (torch.round(soft) - soft).detach()
        return self.dec(hard)


torch.manual_seed(0)
model = BinaryAE()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    x = torch.randn(16, 12)
    loss = nn.functional.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()

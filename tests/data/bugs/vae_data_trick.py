# runtime: no-update: model.enc
"""A VAE whose KL term is computed from `.data` of the encoder outputs (a 'speed trick')."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, d=20, z=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 2 * z))
        self.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu.data + torch.randn_like(mu) * torch.exp(0.5 * logvar.data)  # <- GA101, GA101
        return self.dec(z), mu, logvar


torch.manual_seed(0)
model = VAE()
opt = torch.optim.Adam(model.dec.parameters(), lr=1e-3)
opt.add_param_group({"params": model.enc.parameters(), "lr": 1e-3})
for step in range(3):
    x = torch.randn(16, 20)
    recon, mu, logvar = model(x)
    loss = F.mse_loss(recon, x)
    opt.zero_grad()
    loss.backward()
    opt.step()

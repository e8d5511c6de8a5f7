# runtime: trains
"""A VAE's test pass under `torch.no_grad()`, and a second one that keeps numbers (`.item()`): the
totals hold no graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(2, 8)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        nll = F.mse_loss(self.dec(z), x, reduction="sum")
        return kld, nll


def train(model, optimizer, batches):
    for x in batches:
        kld, nll = model(x)
        optimizer.zero_grad()
        (kld + nll).backward()
        optimizer.step()


@torch.no_grad()
def test(model, batches):
    total_kld, total_nll = 0, 0
    for x in batches:
        kld, nll = model(x)
        total_kld += kld
        total_nll += nll
    return total_kld / len(batches), total_nll / len(batches)


def validate(model, batches):
    total = 0.0
    for x in batches:
        kld, nll = model(x)
        total += (kld + nll).item()
    return total / len(batches)


torch.manual_seed(0)
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [torch.randn(16, 8) for _ in range(4)]
for epoch in range(2):
    train(model, optimizer, batches)
    total_kld, total_nll = test(model, batches)
    print(f"test kld {total_kld:.3f} nll {total_nll:.3f} val {validate(model, batches):.3f}")

# runtime: graph-kept: stats
# confidence: suspicious
"""A VAE's test pass, as a variational RNN repository wrote it: the evaluation loop runs the model
with gradient on and adds each batch's KL and reconstruction losses, tensors with their graphs,
into running totals. Nothing backpropagates them, and every batch's graph stays alive until the
loop ends (the repository's fix was "fixed gpu mem issue")."""
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


def test(model, batches):
    total_kld, total_nll = 0, 0
    for x in batches:
        kld, nll = model(x)
        total_kld += kld  # <- GA303
        total_nll += nll  # <- GA303
    stats["kld"], stats["nll"] = total_kld / len(batches), total_nll / len(batches)
    print(f"test kld {stats['kld']:.3f} nll {stats['nll']:.3f}")


torch.manual_seed(0)
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [torch.randn(16, 8) for _ in range(4)]
stats = {}
for epoch in range(2):
    train(model, optimizer, batches)
    test(model, batches)

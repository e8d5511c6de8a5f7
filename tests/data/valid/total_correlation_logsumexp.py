# runtime: trains
"""A β-TCVAE's total-correlation term with `torch.logsumexp` for both densities: a tight
posterior's log densities past 88 stay finite. The exp of the log-variance in the
reparameterisation is valid (the catalog's convention)."""
import math

import torch
import torch.nn as nn


def log_density(z, mean, log_var):
    return -0.5 * ((z - mean) ** 2 * torch.exp(-log_var) + log_var + math.log(2 * math.pi))


def total_correlation(z, mean, log_var):
    log_q = log_density(z.unsqueeze(1), mean.unsqueeze(0), log_var.unsqueeze(0))
    log_q_joint = log_q.sum(dim=2).logsumexp(dim=1)
    log_q_product = log_q.logsumexp(dim=1).sum(dim=1)
    return (log_q_joint - log_q_product).mean()


torch.manual_seed(0)
encoder, decoder = nn.Linear(8, 64), nn.Linear(32, 8)
nn.init.constant_(encoder.bias, -10.0)  # a tight posterior: log-variances near -10
opt = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=1e-3)
for step in range(3):
    x = torch.randn(16, 8)
    mean, log_var = encoder(x).chunk(2, dim=-1)
    z = mean + torch.randn_like(mean) * (0.5 * log_var).exp()
    loss = (decoder(z) - x).pow(2).mean() + 5.0 * total_correlation(z, mean, log_var)
    opt.zero_grad()
    loss.backward()
    opt.step()

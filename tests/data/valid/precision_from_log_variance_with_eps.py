# runtime: trains
"""After a ladder VAE's merge of two Gaussians: each precision is 1 / (exp(log_var) + 1e-7), an
eps-guarded inverse of a variance, not a sigmoid written by hand; exp of a log-variance is the
catalog's valid use of exp (checked with torch 2.13: it trains, every value finite)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Linear(6, 8)
opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
for _ in range(3):
    mu_1, log_var_1 = enc(torch.randn(16, 6)).chunk(2, dim=1)
    mu_2, log_var_2 = torch.zeros(16, 4), torch.zeros(16, 4)
    p_1 = 1.0 / (log_var_1.exp() + 1e-7)
    p_2 = 1.0 / (log_var_2.exp() + 1e-7)
    mu = (mu_1 * p_1 + mu_2 * p_2) / (p_1 + p_2)
    log_var = torch.log(1.0 / (p_1 + p_2))
    loss = (mu.pow(2) + log_var.exp() - log_var).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: no-update: encoder
"""A latent drawn with `rsample()` (the differentiable draw of a torch distribution) enters the loss
through `.item()`: the term only shifts the loss value and the encoder gets no gradient. The twin in
the real-code reductions draws with `sample()`, which never carries gradient, and hands `.item()`
to the environment: quiet."""
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)
encoder = nn.Linear(4, 2)
decoder = nn.Linear(4, 4)
opt = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-2)
for _ in range(5):
    x = torch.randn(8, 4)
    mu = encoder(x)
    z = Normal(mu, torch.ones_like(mu)).rsample()
    loss = (decoder(x) - x).pow(2).mean() + 0.1 * z.pow(2).mean().item()  # <- GA103
    opt.zero_grad()
    loss.backward()
    opt.step()

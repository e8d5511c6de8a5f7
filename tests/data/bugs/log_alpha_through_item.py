# runtime: no-update: log_alpha
"""SAC's temperature is a leaf in its own optimizer, but its loss takes the temperature through
`.item()`: the only path from `log_alpha` to `alpha_loss` is cut, so it never learns."""
import torch
import torch.nn as nn

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 4))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
log_alpha = torch.zeros(1, requires_grad=True)
alpha_opt = torch.optim.Adam([log_alpha], lr=1e-2)
target_entropy = -2.0
for step in range(5):
    out = actor(torch.randn(16, 3))
    mu, log_std = out[:, :2], out[:, 2:].clamp(-5, 2)
    action = mu + log_std.exp() * torch.randn_like(mu)
    log_prob = (-0.5 * ((action - mu) / log_std.exp()) ** 2 - log_std).sum(-1)
    alpha = log_alpha.exp().item()  # <- GA103
    actor_loss = (alpha * log_prob - action.pow(2).sum(-1)).mean()
    alpha_loss = -(alpha * (log_prob + target_entropy)).mean()
    actor_opt.zero_grad()
    alpha_opt.zero_grad()
    (actor_loss + alpha_loss).backward()
    actor_opt.step()
    alpha_opt.step()

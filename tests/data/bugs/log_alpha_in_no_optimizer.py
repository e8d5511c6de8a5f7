# runtime: no-update: log_alpha
"""SAC's temperature made a leaf with `requires_grad=True` so that it can learn, but it was left out
of every optimizer: its loss is backpropagated at each step, yet nothing ever updates it."""
import torch
import torch.nn as nn

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 4))
log_alpha = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)  # <- GA108
target_entropy = -2.0
for step in range(5):
    out = actor(torch.randn(16, 3))
    mu, log_std = out[:, :2], out[:, 2:].clamp(-5, 2)
    action = mu + log_std.exp() * torch.randn_like(mu)
    log_prob = (-0.5 * ((action - mu) / log_std.exp()) ** 2 - log_std).sum(-1)
    actor_loss = (log_alpha.exp().detach() * log_prob - action.pow(2).sum(-1)).mean()
    alpha_loss = -(log_alpha * (log_prob + target_entropy).detach()).mean()
    optimizer.zero_grad()
    (actor_loss + alpha_loss).backward()
    optimizer.step()

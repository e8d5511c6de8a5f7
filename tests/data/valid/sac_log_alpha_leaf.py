# runtime: trains
"""SAC's entropy temperature: `log_alpha` is a plain leaf (`torch.zeros(1, requires_grad=True)`),
not a module parameter, with an optimizer of its own; the actor's loss uses the temperature
detached, and the temperature's loss uses the log-probabilities detached."""
import torch
import torch.nn as nn

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 4))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
log_alpha = torch.zeros(1, requires_grad=True)
alpha_opt = torch.optim.Adam([log_alpha], lr=1e-2)
target_entropy = -2.0
start = log_alpha.detach().clone()
for step in range(5):
    out = actor(torch.randn(16, 3))
    mu, log_std = out[:, :2], out[:, 2:].clamp(-5, 2)
    action = mu + log_std.exp() * torch.randn_like(mu)
    log_prob = (-0.5 * ((action - mu) / log_std.exp()) ** 2 - log_std).sum(-1)
    actor_loss = (log_alpha.exp().detach() * log_prob - action.pow(2).sum(-1)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()

    alpha_loss = -(log_alpha * (log_prob + target_entropy).detach()).mean()
    alpha_opt.zero_grad()
    alpha_loss.backward()
    alpha_opt.step()
assert not torch.equal(start, log_alpha.detach())

# runtime: trains
"""The valid form of bugs/parse_losses_no_grad_adversarial_term.py: the discriminator is frozen
(`requires_grad_(False)`) while it scores the fake for the generator's loss, so the adversarial term
sends gradient to the generator and none to the discriminator (checked with torch 2.13: the
generator's gradients differ from the L1 term's alone)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_losses(losses):
    log_vars = {name: value.mean() for name, value in losses.items()}
    loss = sum(v for k, v in log_vars.items() if "loss" in k)
    return loss, {k: v.item() for k, v in log_vars.items()}


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 8))
D = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
for it in range(3):
    x, gt = torch.randn(16, 8), torch.randn(16, 8)
    fake = G(x)
    d_loss, _ = parse_losses({"loss_d": F.softplus(D(fake.detach())) + F.softplus(-D(gt))})
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    losses = {}
    D.requires_grad_(False)
    pred = D(fake)
    D.requires_grad_(True)
    losses["loss_g_fake"] = F.softplus(-pred)
    losses["loss_l1"] = F.l1_loss(fake, gt)
    loss_g, log = parse_losses(losses)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()

# runtime: skip (checked by hand: the generator's gradients are the L1 term's alone)
"""After mmediting's one-stage inpaintor: the generator's adversarial term is computed from the
discriminator's score under `torch.no_grad()` and collected, with the L1 term, in a dict of losses
that an OpenMMLab-style `parse_losses` averages and sums (`sum(v for k, v in log_vars.items() if
"loss" in k)`). The adversarial term is a constant: it shifts the loss's value and trains nothing.
Checked with torch 2.13 (CPU): in every iteration the generator's gradients equal those of the L1
term alone; valid/parse_losses_adversarial_term_through_frozen_d.py scores the fake with D frozen
instead, and the gradients differ."""
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
    with torch.no_grad():  # <- GA102
        pred = D(fake)
    losses["loss_g_fake"] = F.softplus(-pred)
    losses["loss_l1"] = F.l1_loss(fake, gt)
    loss_g, log = parse_losses(losses)
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()

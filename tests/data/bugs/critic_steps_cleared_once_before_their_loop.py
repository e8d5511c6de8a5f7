# runtime: stale-grads
"""BigGAN-style training: several discriminator steps per generator step, each a few accumulated
micro-batches then `D_opt.step()`, but D's gradients are cleared once, before the loop over the D
steps: from the second D step on, each step applies its own gradient plus every earlier one."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
G_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
D_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
num_D_steps, num_D_accumulations = 2, 2
for it in range(3):
    D_opt.zero_grad()
    for step_index in range(num_D_steps):
        for accumulation_index in range(num_D_accumulations):
            real, z = torch.randn(8, 8), torch.randn(8, 4)
            D_loss = nn.functional.softplus(-D(real)).mean() + nn.functional.softplus(D(G(z).detach())).mean()
            (D_loss / num_D_accumulations).backward()
        D_opt.step()  # <- GA201
    G_opt.zero_grad()
    G_loss = nn.functional.softplus(-D(G(torch.randn(8, 4)))).mean()
    G_loss.backward()
    G_opt.step()

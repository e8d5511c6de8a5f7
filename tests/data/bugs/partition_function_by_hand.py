# runtime: nonfinite
# confidence: suspicious
"""An energy-based critic's partition function written by hand: `log(sum(exp(-e)) + eps)`. A
low energy (a large `-e`) overflows exp to inf in float32 and the loss is inf, its gradient NaN;
`torch.logsumexp` subtracts the maximum first."""
import torch
import torch.nn as nn

torch.manual_seed(0)
energy = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(energy.parameters(), lr=1e-3)
with torch.no_grad():
    energy[2].weight.mul_(200.0)  # a critic whose energies have grown, as they do in training
for i in range(3):
    real, noise = 30 * torch.randn(8, 2), 30 * torch.randn(8, 2)
    e_real, e_noise = energy(real), energy(noise)
    z_real = torch.sum(torch.exp(-e_real))  # <- GA404
    z_noise = torch.sum(torch.exp(-e_noise))  # <- GA404
    z = z_real + z_noise
    loss = torch.mean(e_real) + torch.log(z + 1e-8)
    opt.zero_grad()
    loss.backward()
    opt.step()

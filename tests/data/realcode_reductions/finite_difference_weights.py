# reduction-of: diffusers@58eb52c0803e examples/research_projects/consistency_training/train_cm_ct_unconditional.py:144 GA402
# false: GA402
"""Loss weights from the differences of neighbouring noise levels: `1 / (sigmas[1:] - sigmas[:-1])`.

The real code (consistency training): `get_loss_weighting_schedule(noise_levels)` returns
`1.0 / (noise_levels[1:] - noise_levels[:-1])` for the increasing Karras noise levels; the weights
multiply the per-sample loss that is backpropagated.

False finding: GA402 confirmed: "division by a value that can be exactly 0". The engine took a
difference of two slices of one tensor for `x - x[j]` or `x[:, None] - x[None]`, which pair an element
with itself and are zero there. Slices starting at different offsets pair distinct elements (a finite
difference): zero only where neighbours are equal, like any `a - b`, and never for the strictly
increasing levels.

Verified with torch 2.13 (CPU): the weights are finite and positive, three training steps run with
finite gradients. Prints OK.
"""
import numpy as np
import torch
import torch.nn as nn


def karras_sigmas(n, sigma_min=0.002, sigma_max=80.0, rho=7.0):
    ramp = np.linspace(0, 1, n)
    s = (sigma_max ** (1 / rho) + ramp * (sigma_min ** (1 / rho) - sigma_max ** (1 / rho))) ** rho
    return torch.from_numpy(s[::-1].copy()).float()


def loss_weights(levels):
    return 1.0 / (levels[1:] - levels[:-1])


torch.manual_seed(0)
net = nn.Linear(4, 4)
opt = torch.optim.SGD(net.parameters(), lr=1e-3)
weights = loss_weights(karras_sigmas(50))
assert torch.isfinite(weights).all() and (weights > 0).all()
for _ in range(3):
    idx = torch.randint(0, len(weights), (8,))
    x = torch.randn(8, 4)
    loss = (weights[idx, None] * (net(x) - x) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters())
    opt.step()
print("OK")

# reduction-of: PyTorch-GAN@36d3c77e5ff2 implementations/esrgan/esrgan.py:145 GA301
# false: GA301
"""A generator step with a warm-up phase: `if step < warmup: pixel_loss.backward(); opt.step(); continue`.

The real code (ESRGAN): in the batch loop the generator's pixel loss is computed; during the first
`warmup_batches` it alone is backpropagated and the loop `continue`s; afterwards the full generator
loss `loss_content + lambda_adv * loss_GAN + lambda_pixel * loss_pixel` is backpropagated.

False finding: GA301 confirmed at the second `backward()`: "shares part of its graph with a loss whose
backward() already ran without retain_graph=True". The two backward() calls are on exclusive paths: the
warm-up branch ends the iteration with `continue`, so no iteration runs both.

Verified with torch 2.13 (CPU): four iterations (two warm-up, two full) run without error and the
generator changes in every one. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
critic = nn.Linear(8, 1).requires_grad_(False)   # trained elsewhere; fixed in the generator step
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
l1 = nn.L1Loss()
warmup = 2

for step in range(4):
    x, target = torch.randn(4, 8), torch.randn(4, 8)
    before = [p.detach().clone() for p in generator.parameters()]
    opt_g.zero_grad()
    fake = generator(x)
    loss_pixel = l1(fake, target)
    if step < warmup:
        loss_pixel.backward()
        opt_g.step()
        assert all(not torch.equal(b, p) for b, p in zip(before, generator.parameters()))
        continue
    loss_adv = -critic(fake).mean()
    loss_g = loss_adv + 0.01 * loss_pixel
    loss_g.backward()
    opt_g.step()
    assert all(not torch.equal(b, p) for b, p in zip(before, generator.parameters()))
print("OK")

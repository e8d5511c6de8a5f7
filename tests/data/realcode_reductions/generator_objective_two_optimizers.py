# reduction-of: PyTorch-GAN@36d3c77e5ff2 implementations/bicyclegan/bicyclegan.py:185 GA304
# false: GA304
"""BicycleGAN's generator/encoder step: one loss for G and E, stepped by E's optimizer, then a latent loss, then G's step.

The real code: `loss_GE = loss_VAE_GAN + loss_LR_GAN + lambda_pixel * loss_pixel + lambda_kl * loss_kl`
(the adversarial terms score the generator's outputs with target `valid`), `loss_GE.backward(retain_graph=True)`,
`optimizer_E.step()`; then `loss_latent = lambda_latent * mae(encoder(_fake_B), sampled_z)`,
`loss_latent.backward()`, `optimizer_G.step()`. The discriminators are trained afterwards on
`fake_B.detach()`.

False finding: GA304 confirmed at `loss_GE`: "parameters of `generator`, which `optimizer_G` trains, reach
`loss_GE` without a `.detach()`: its backward() writes into their gradients, and `optimizer_G.step()`
applies them". That is the intent: `loss_GE` is the generator's (and encoder's) own objective, not a
discriminator loss on G(z); the generator is meant to step on loss_GE plus loss_latent (the encoder, as
in the paper, not on loss_latent: it has stepped already).

Verified with torch 2.13 (CPU): three iterations run; the generator's gradient at its step equals the
gradient of loss_GE + loss_latent, and the encoder, generator and critic all change. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(6, 2)
generator = nn.Linear(4 + 2, 6)
critic = nn.Linear(6, 1)
opt_e = torch.optim.Adam(encoder.parameters(), lr=1e-3)
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3)
mse, l1 = nn.MSELoss(), nn.L1Loss()
start = [p.detach().clone() for m in (encoder, generator, critic) for p in m.parameters()]

for step in range(3):
    real_a, real_b = torch.randn(5, 4), torch.randn(5, 6)
    valid, fake = torch.ones(5, 1), torch.zeros(5, 1)

    opt_e.zero_grad()
    opt_g.zero_grad()
    z = encoder(real_b)
    fake_b = generator(torch.cat([real_a, z], 1))
    loss_pixel = l1(fake_b, real_b)
    loss_gan = mse(critic(fake_b), valid)
    sampled_z = torch.randn(5, 2)
    _fake_b = generator(torch.cat([real_a, sampled_z], 1))
    loss_lr_gan = mse(critic(_fake_b), valid)
    loss_ge = loss_gan + loss_lr_gan + 10 * loss_pixel
    loss_ge.backward(retain_graph=True)
    opt_e.step()

    loss_latent = l1(encoder(_fake_b), sampled_z)
    expected = torch.autograd.grad(loss_ge + loss_latent, list(generator.parameters()), retain_graph=True)
    loss_latent.backward()
    assert all(torch.allclose(p.grad, g, atol=1e-6) for p, g in zip(generator.parameters(), expected))
    opt_g.step()

    opt_d.zero_grad()
    loss_d = mse(critic(real_b), valid) + mse(critic(fake_b.detach()), fake)
    loss_d.backward()
    opt_d.step()
end = [p for m in (encoder, generator, critic) for p in m.parameters()]
assert all(not torch.equal(a, b) for a, b in zip(start, end))
print("OK")

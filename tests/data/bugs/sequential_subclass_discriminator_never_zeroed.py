# runtime: stale-grads
"""A patch discriminator written as a subclass of nn.Sequential that adds its layers with
`add_module` after `super().__init__()`, trained with the generator in one loop: the generator's
optimizer is cleared each iteration, the discriminator's never, so every discriminator step applies
the sum of all its gradients so far (MONAI GenerativeModels' VQ-GAN tutorial shipped this)."""
import torch
import torch.nn as nn


class PatchDiscriminator(nn.Sequential):
    def __init__(self, channels=8, layers=2):
        super().__init__()
        self.add_module("initial_conv", nn.Conv2d(1, channels, 3, stride=2, padding=1))
        for i in range(layers):
            self.add_module("%d" % i, nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.LeakyReLU(0.2)))
        self.add_module("final_conv", nn.Conv2d(channels, 1, 3, padding=1))

    def forward(self, x):
        out = [x]
        for submodel in self.children():
            out.append(submodel(out[-1]))
        return out[1:]


torch.manual_seed(0)
generator = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
discriminator = PatchDiscriminator()
optimizer_g = torch.optim.Adam(generator.parameters(), lr=1e-4)
optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=5e-4)
for step in range(3):
    images = torch.randn(4, 1, 16, 16)
    optimizer_g.zero_grad(set_to_none=True)
    reconstruction = generator(images)
    logits_fake = discriminator(reconstruction)[-1]
    loss_g = (reconstruction - images).abs().mean() + 0.01 * ((logits_fake - 1) ** 2).mean()
    loss_g.backward()
    optimizer_g.step()

    logits_fake = discriminator(reconstruction.detach())[-1]
    logits_real = discriminator(images)[-1]
    loss_d = 0.01 * 0.5 * ((logits_fake**2).mean() + ((logits_real - 1) ** 2).mean())
    loss_d.backward()
    optimizer_d.step()  # <- GA201

# reduction-of: PyTorch-GAN@36d3c77e5ff2 implementations/srgan/models.py:105 GA110
# false: GA110
"""A GAN critic built as `layers = []; layers.extend(block(...))`, scoring a generator's Tanh output.

The real code (SRGAN, and context_encoder alike): the discriminator's __init__ builds its layers with a
local helper that returns `[Conv2d, (BatchNorm2d), LeakyReLU(inplace=True)]`, extends an empty list
with it in a loop and wraps `nn.Sequential(*layers)`. The generator ends in `nn.Tanh()`; the
generator step backpropagates `criterion(discriminator(gen_hr), valid)` (MSE), the
discriminator step the MSE of real and detached fake scores.

False finding: GA110 confirmed at the discriminator's `return self.model(img)`: "in-place change of a
tensor that `tanh` saved for backward". The first layer is a Conv2d: every in-place LeakyReLU acts on a
convolution's output, never on the Tanh output. The engine keeps `list.extend(...)` as an unordered
summary of the list's elements, and `nn.Sequential(*summary)` then registers (and applies) the modules
in the iteration order of a set of objects hashed by their global creation counter. So the order, and
the finding, depend on how many objects earlier analyses in the same process created: the same file
draws it or not depending on which files a `gradaudit check -j N` worker, the benchmark or the language
server analyzed before (about one start value in three for the real file). Two defects: the order must
not depend on that counter, and a Sequential whose order is unknown proves no in-place conflict.

Verified with torch 2.13 (CPU): both steps run without the "modified by an inplace operation"
error, the generator and the critic get nonzero gradients and change. Prints OK.
"""
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, channels=3):
        super().__init__()

        def block(cin, cout, first=False):
            layers = [nn.Conv2d(cin, cout, 3, 2, 1)]
            if not first:
                layers.append(nn.BatchNorm2d(cout))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        layers = []
        cin = channels
        for i, cout in enumerate([8, 16]):
            layers.extend(block(cin, cout, first=(i == 0)))
            cin = cout
        layers.append(nn.Conv2d(cin, 1, 3, 1, 1))
        self.model = nn.Sequential(*layers)

    def forward(self, img):
        return self.model(img)


torch.manual_seed(0)
generator = nn.Sequential(nn.Conv2d(3, 3, 3, 1, 1), nn.Tanh())
critic = Critic()
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3)
g0 = [p.detach().clone() for p in generator.parameters()]
d0 = [p.detach().clone() for p in critic.parameters()]
mse = nn.MSELoss()
x = torch.randn(4, 3, 16, 16)

opt_g.zero_grad()
fake = generator(x)
score = critic(fake)
loss_g = mse(score, torch.ones_like(score))
loss_g.backward()
assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in generator.parameters())
opt_g.step()

opt_d.zero_grad()
real_score, fake_score = critic(x), critic(fake.detach())
loss_d = (mse(real_score, torch.ones_like(real_score)) + mse(fake_score, torch.zeros_like(fake_score))) / 2
loss_d.backward()
opt_d.step()

assert all(not torch.equal(a, b) for a, b in zip(g0, generator.parameters()))
assert all(not torch.equal(a, b) for a, b in zip(d0, critic.parameters()))
print("OK")

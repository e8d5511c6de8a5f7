# runtime: nonfinite
# confidence: suspicious
"""A hybrid WGAN generator step (after shapegan): the critic was built with a sigmoid head and then
switched to raw outputs for the Wasserstein loss, but the generator's loss still takes
`-torch.log` of the critic's output. A raw layer output is negative for many samples: the log is
NaN there, and so is every gradient."""
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
critic = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1, bias=False))
g_opt = torch.optim.Adam(generator.parameters(), lr=1e-3)
c_opt = torch.optim.RMSprop(critic.parameters(), lr=1e-3)
for _ in range(50):
    real = torch.randn(32, 8)
    fake = generator(torch.randn(32, 4))
    c_loss = critic(fake.detach()).mean() - critic(real).mean()
    c_opt.zero_grad()
    c_loss.backward()
    c_opt.step()
    g_loss = torch.mean(-torch.log(critic(fake)))  # <- GA401
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()

# runtime: trains
"""The twin of bugs/retained_code_after_both_steps.py: the critic's second update scores a sample
regenerated from the code and detached, so its backward() stays in the critic's fresh graph and
never reaches the encoder's, which the step changed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8))
generator = nn.Sequential(nn.Linear(8 + 3, 16), nn.ReLU(), nn.Linear(16, 6))
critic = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam([*encoder.parameters(), *generator.parameters()], lr=1e-3)
opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3)

for it in range(3):
    references, layout, real = torch.randn(5, 6), torch.randn(4, 3), torch.randn(4, 6)
    code = encoder(references).mean(dim=0, keepdim=True).expand(4, -1)
    fake = generator(torch.cat([code, layout], dim=1))

    opt_g.zero_grad()
    opt_d.zero_grad()
    loss_g = -critic(fake).mean() + (fake - real).abs().mean()
    loss_d = F.relu(1 - critic(real)).mean() + F.relu(1 + critic(fake)).mean()
    (loss_g + loss_d).backward(retain_graph=True)
    opt_g.step()
    opt_d.step()

    # the critic again, on a sample regenerated from the same code
    fake = generator(torch.cat([code, layout], dim=1)).detach()
    opt_d.zero_grad()
    loss_d = F.relu(1 - critic(real)).mean() + F.relu(1 + critic(fake)).mean()
    loss_d.backward()
    opt_d.step()

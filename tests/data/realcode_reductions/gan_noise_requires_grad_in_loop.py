# reduction-of: PyTorch-Tutorial@dbe154a9e566 tutorial-contents/406_GAN.py:59 GA108
# false: GA108
"""A GAN tutorial draws the generator's input noise with `torch.randn(BATCH, N_IDEAS,
requires_grad=True)` in every iteration; the optimizers hold the generator's and the
discriminator's parameters.

False finding: GA108 confirmed at the noise: "`G_ideas` is created in the training loop and never
added to `opt_G`: `G_loss` sends them gradient, but nothing updates them". The noise is an input
(made anew each iteration, it could not learn anything): inputs that require grad are not
forgotten parameters. A plain tensor made with requires_grad=True inside the loop is now taken as
an input.

Verified with torch 2.13 (CPU): both networks train; the noise is new each iteration. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 8))
D = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
before = G[0].weight.detach().clone()
for step in range(3):
    real = torch.randn(4, 8)
    G_ideas = torch.randn(4, 5, requires_grad=True)
    fake = G(G_ideas)
    G_loss = torch.mean(torch.log(1.0 - D(fake) + 1e-6))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()
    D_loss = -torch.mean(torch.log(D(real) + 1e-6) + torch.log(1.0 - D(fake.detach()) + 1e-6))
    opt_D.zero_grad()
    D_loss.backward()
    opt_D.step()
assert not torch.equal(before, G[0].weight)
print("OK")

# runtime: error: Trying to backward through the graph a second time
"""A GAN loop that updates the generator first and then reuses the same fake batch, not detached,
in the discriminator's loss: D's backward runs into G's graph, already freed by G's backward."""
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for it in range(3):
    real = torch.randn(16, 2) + 3
    fake = G(torch.randn(16, 4))
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(16, 1))
    g_loss.backward()
    opt_g.step()

    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake), torch.zeros(16, 1))  # <- GA304
    d_loss.backward()
    opt_d.step()

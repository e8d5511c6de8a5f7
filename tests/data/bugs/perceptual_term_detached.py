# runtime: trains
"""A generator trained on an L1 loss plus a perceptual term written as
`w * perceptual.detach().item()`: the term is a constant in the loss, so its gradient never
reaches the generator (the loss still trains it through the L1 term; the perceptual term is dead)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
gen = nn.Linear(8, 8)
features = nn.Linear(8, 4).requires_grad_(False)
optimizer = torch.optim.Adam(gen.parameters(), lr=1e-2)
for _ in range(3):
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    out = gen(x)
    l1 = F.l1_loss(out, y)
    perceptual = F.mse_loss(features(out), features(y))
    loss = l1 + 0.1 * perceptual.detach().item()  # <- GA101
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# the perceptual term sends the generator nothing: the gradient is the L1 term's alone
out = gen(x)
l1 = F.l1_loss(out, y)
perceptual = F.mse_loss(features(out), features(y))
total = l1 + 0.1 * perceptual.detach().item()
assert torch.equal(torch.autograd.grad(total, gen.weight, retain_graph=True)[0], torch.autograd.grad(l1, gen.weight)[0])

# runtime: no-update: W_out
"""A hand-made output projection: `W_out` is created once, before the loop, with
`requires_grad=True` and used in every forward pass, but the optimizer is given only the encoder's
parameters: the projection gets gradient at each step and never changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
W_out = torch.randn(16, 3, requires_grad=True)
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)  # <- GA108
for step in range(5):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    logits = encoder(x) @ W_out
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# runtime: graph-kept: history
"""Gradient guidance on the latents with `create_graph=True`, every guided latent kept in a history
list made before the loop: each one holds the double-backward graph, and through it the network's
activations of its step, so memory grows with every step."""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.Tanh(), nn.Conv2d(16, 4, 3, padding=1))
history = []
latents = torch.randn(2, 4, 8, 8)
for t in range(4):
    latents = latents.clone().detach().requires_grad_(True)
    loss = net(latents).pow(2).mean()
    grad = torch.autograd.grad(loss, [latents], create_graph=True)[0]
    latents = latents - 0.5 * grad
    history.append(latents)  # <- GA303
    latents = latents.detach() * 0.98

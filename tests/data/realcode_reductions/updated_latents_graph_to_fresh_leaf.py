# reduction-of: diffusers@58eb52c0803e src/diffusers/pipelines/deprecated/stable_diffusion_attend_and_excite/pipeline_stable_diffusion_attend_and_excite.py:993 GA303
# false: GA303
# quiet: GA303
"""Guidance by gradient on the latents, one image at a time: each step makes the latents a fresh
leaf, runs the network on one latent, takes the gradient of a loss with respect to it
(`torch.autograd.grad` without `create_graph`), moves the latent and appends it to a list that is
joined after the loop.

The real code (diffusers' attend-and-excite pipeline): `latents = latents.clone().detach()
.requires_grad_(True)`, `updated_latents = []`, then for each latent `self.unet(latent, ...)`, a loss
on the attention maps, `latent = latent - step_size * torch.autograd.grad(loss, [latent])[0]` and
`updated_latents.append(latent)`; `latents = torch.cat(updated_latents)`.

False finding: GA303 at the append, "a tensor with its autograd graph is accumulated into state
that outlives the iteration: every iteration's graph stays alive with it". The appended latent's
graph is Sub -> Unsqueeze -> Unbind -> the fresh leaf: the gradient it subtracts carries no graph,
so the network's activations are not in it and nothing grows.

Verified with torch 2.13 (CPU): the appended latent's graph is exactly those nodes, and no
activation of an earlier image's forward stays alive. Prints OK.
"""
import gc
import weakref

import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.Tanh(), nn.Conv2d(16, 4, 3, padding=1))
activations = []
latents = torch.randn(3, 4, 8, 8)
for t in range(4):
    latents = latents.clone().detach().requires_grad_(True)
    updated_latents = []
    for latent in latents:
        latent = latent.unsqueeze(0)
        hidden = net[1](net[0](latent))
        activations.append(weakref.ref(hidden))
        loss = net[2](hidden).pow(2).mean()
        grad = torch.autograd.grad(loss, [latent])[0]
        latent = latent - 0.5 * grad
        updated_latents.append(latent)
    chain, node = [], updated_latents[0].grad_fn
    while node is not None:
        chain.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    assert chain == ["SubBackward0", "UnsqueezeBackward0", "UnbindBackward0", "AccumulateGrad"], chain
    with torch.no_grad():
        latents = torch.cat(updated_latents, dim=0) * 0.98
    del hidden, loss
    gc.collect()
    assert sum(r() is not None for r in activations) == 0
print("OK")

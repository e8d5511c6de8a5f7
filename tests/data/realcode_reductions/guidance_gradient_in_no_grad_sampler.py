# reduction-of: diffusers@58eb52c0803e examples/community/clip_guided_stable_diffusion.py:162 GA101
# false: GA101, GA102
"""A sampler under @torch.no_grad() whose guidance step is a method decorated @torch.enable_grad().

The real code (CLIP-guided Stable Diffusion community pipelines): `__call__` is decorated
`@torch.no_grad()` and loops over the timesteps; each step calls `self.cond_fn(latents, ...)`, a method
decorated `@torch.enable_grad()` that makes `latents = latents.detach().requires_grad_()`, runs the
U-Net and a frozen CLIP model, takes `torch.autograd.grad(loss, latents)` and returns
`latents.detach() + grads * sigma**2`.

False findings: GA101 confirmed at that `.detach()` ("loss then reaches no trainable parameter and
backward() raises") and GA102 confirmed at the `@torch.no_grad()` of `__call__`. The engine ignored the
`@torch.enable_grad()` decorator, so it ran `cond_fn` under the caller's no_grad: the loss seemed to
carry no gradient. torch switches grad mode on inside the decorated method whatever the caller's
mode; the gradient with respect to the fresh leaf `latents` exists and is finite.

Verified with torch 2.13 (CPU): the sampler runs three steps under no_grad, the guidance gradient is
non-zero and finite at each step, and the returned latents do not require grad. Prints OK.
"""
import torch
import torch.nn as nn


class GuidedSampler:
    def __init__(self):
        torch.manual_seed(0)
        self.unet = nn.Linear(4, 4)
        self.critic = nn.Linear(4, 1).requires_grad_(False)
        self.norms = []

    @torch.enable_grad()
    def guide(self, latents, noise_pred, sigma):
        latents = latents.detach().requires_grad_()
        sample = latents - sigma * self.unet(latents)
        loss = self.critic(sample).pow(2).mean()
        grads = -torch.autograd.grad(loss, latents)[0]
        self.norms.append(grads.norm().item())
        latents = latents.detach() + grads * sigma**2
        return noise_pred, latents

    @torch.no_grad()
    def __call__(self, steps=3):
        latents = torch.randn(2, 4)
        for _ in range(steps):
            noise_pred = self.unet(latents)
            noise_pred, latents = self.guide(latents, noise_pred, 0.5)
            latents = latents - 0.1 * noise_pred
        return latents


sampler = GuidedSampler()
out = sampler()
assert not out.requires_grad
assert len(sampler.norms) == 3 and all(0 < n < float("inf") for n in sampler.norms), sampler.norms
print("OK")

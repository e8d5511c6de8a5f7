# reduction-of: denoising-diffusion-pytorch@faed4db28e72 denoising_diffusion_pytorch/v_param_continuous_time_gaussian_diffusion.py:160 GA403
# false: GA403
"""A continuous-time diffusion's forward fills its optional `times` with lucidrains' `default(val,
d)`, which returns `d() if callable(d) else d`: here `d` is the tensor `self.random_times(b)` (uniform
draws, no gradient), so `default` returns that tensor. The schedule `alpha = sqrt(sigmoid(log_snr))`
is a function of those times only.

False finding: GA403 (suspicious, from running `forward` alone) at the sqrt: `callable(tensor)` was
not decided, so the engine also followed `d()`, calling a tensor, whose unknown result might carry
gradient. `callable()` of a tensor, a number, a string or a container is False. Nothing
differentiates the root (the times carry no gradient).

Verified with torch 2.13 (CPU): the loss backpropagates, every gradient finite. Prints OK.
"""
import math

import torch
from torch import nn


def exists(val):
    return val is not None


def default(val, d):
    if exists(val):
        return val
    return d() if callable(d) else d


def cosine_log_snr(t, s=0.008):
    return -torch.log(((torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** -2) - 1).clamp(min=1e-5))


class Diffusion(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.log_snr = cosine_log_snr

    def random_times(self, b):
        return torch.zeros((b,)).float().uniform_(0, 1)

    def forward(self, img, times=None):
        times = default(times, self.random_times(img.shape[0]))
        noise = default(None, lambda: torch.randn_like(img))
        log_snr = self.log_snr(times)[:, None]
        alpha, sigma = torch.sqrt(log_snr.sigmoid()), torch.sqrt((-log_snr).sigmoid())
        pred = self.net(img * alpha + noise * sigma)
        return ((pred - (alpha * noise - sigma * img)) ** 2).mean()


model = Diffusion(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 4)))
loss = model(torch.randn(8, 4))
loss.backward()
assert all(torch.isfinite(p.grad).all() for p in model.parameters())
print("OK")

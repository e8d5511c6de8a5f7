# runtime: trains
"""The valid form of bugs/arcface_sqrt_of_clamped_cosine.py: the cosine is clamped to
[-1 + eps, 1 - eps], so 1 - cos^2 stays above 0 and the sqrt's gradient finite, even where an
embedding points exactly at its class centre (checked with torch 2.13: every gradient finite)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
emb = nn.Linear(16, 8)
centres = nn.Parameter(torch.randn(10, 8))
opt = torch.optim.SGD([*emb.parameters(), centres], lr=0.1)
m = 0.5
x, y = torch.randn(4, 16), torch.tensor([3, 1, 4, 1])
with torch.no_grad():
    centres[3] = emb(x)[0] * 2.0
for _ in range(3):
    cos = F.linear(F.normalize(emb(x)), F.normalize(centres)).clamp(-1 + 1e-7, 1 - 1e-7)
    sin = torch.sqrt(1.0 - torch.pow(cos, 2))
    phi = cos * math.cos(m) - sin * math.sin(m)
    onehot = F.one_hot(y, 10).bool()
    loss = F.cross_entropy(64 * torch.where(onehot, phi, cos), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: nonfinite
# confidence: suspicious
"""After insightface's ArcFace head: the cosine to each class centre is clamped to [-1, 1] and the
sine is sqrt(1 - cos^2). Where an embedding points exactly at its class centre the clamped cosine
is 1, the sqrt's input 0 and its gradient infinite: backward() puts NaN in the weights. Here the
first sample's centre is set to its embedding's direction, as a converged model gets in float32.
Checked with torch 2.13 (CPU): the centres' .grad holds NaN after the first backward();
valid/arcface_sqrt_of_cosine_clamped_inside.py clamps to [-1 + eps, 1 - eps] and stays finite."""
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
    cos = F.linear(F.normalize(emb(x)), F.normalize(centres)).clamp(-1, 1)
    sin = torch.sqrt(1.0 - torch.pow(cos, 2))  # <- GA403
    phi = cos * math.cos(m) - sin * math.sin(m)
    onehot = F.one_hot(y, 10).bool()
    loss = F.cross_entropy(64 * torch.where(onehot, phi, cos), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: trains
"""BYOL-style training: online network + predictor, an EMA target network updated in place."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Online(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 16))
        self.predictor = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))

    def forward(self, x):
        z = self.encoder(x)
        return z, self.predictor(z)


@torch.no_grad()
def ema_update(target, online, decay=0.99):
    for t, o in zip(target.parameters(), online.parameters()):
        t.mul_(decay).add_(o.detach(), alpha=1 - decay)


def byol_loss(p, z):
    return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()


torch.manual_seed(1)
online = Online()
target_encoder = copy.deepcopy(online.encoder)
for p in target_encoder.parameters():
    p.requires_grad = False
opt = torch.optim.SGD(online.parameters(), lr=0.05, momentum=0.9)
data = torch.randn(32, 10)
for step in range(3):
    v1 = data + 0.1 * torch.randn_like(data)
    v2 = data + 0.1 * torch.randn_like(data)
    _, p1 = online(v1)
    _, p2 = online(v2)
    with torch.no_grad():
        t1, t2 = target_encoder(v1), target_encoder(v2)
    loss = byol_loss(p1, t2) + byol_loss(p2, t1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema_update(target_encoder, online.encoder)

# runtime: trains
"""MoCo-style contrastive learning: a momentum key encoder and a queue of detached keys."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class MoCo(nn.Module):
    def __init__(self, dim=8, queue_size=32, m=0.99, t=0.2):
        super().__init__()
        self.encoder_q = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, dim))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.m, self.t = m, t
        self.register_buffer("queue", F.normalize(torch.randn(queue_size, dim), dim=1))

    @torch.no_grad()
    def momentum_update(self):
        for pk, pq in zip(self.encoder_k.parameters(), self.encoder_q.parameters()):
            pk.data = pk.data * self.m + pq.data * (1 - self.m)

    def forward(self, xq, xk):
        q = F.normalize(self.encoder_q(xq), dim=1)
        with torch.no_grad():
            self.momentum_update()
            k = F.normalize(self.encoder_k(xk), dim=1)
        pos = (q * k).sum(1, keepdim=True)
        neg = q @ self.queue.t()
        logits = torch.cat([pos, neg], dim=1) / self.t
        labels = torch.zeros(logits.size(0), dtype=torch.long)
        self.queue = torch.cat([k, self.queue])[: self.queue.size(0)].detach()
        return F.cross_entropy(logits, labels)


torch.manual_seed(3)
model = MoCo()
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.03)
for step in range(3):
    x = torch.randn(8, 12)
    loss = model(x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

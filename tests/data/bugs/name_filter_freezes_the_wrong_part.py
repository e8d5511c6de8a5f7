# runtime: no-update: model.backbone
"""Meant to fine-tune the backbone and keep the pretrained head: the loop freezes by name every
parameter whose name holds "head", but the forward still detaches the backbone's features, so the
backbone the optimizer holds never gets a gradient. The name filter is applied parameter by
parameter: the backbone's names lack "head", so they stay trainable and the detach is the break.
Its twin in the real-code reductions (frozen_by_name_filter.py) freezes exactly what it detaches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
        self.adapter = nn.Linear(16, 16)
        self.head = nn.Linear(16, 3)
        for name, p in self.named_parameters():
            if "head" in name:
                p.requires_grad = False

    def forward(self, x):
        feats = self.backbone(x).detach()  # <- GA101
        return self.head(F.relu(self.adapter(feats)))


torch.manual_seed(0)
model = Model()
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(4, 8)), torch.randint(0, 3, (4,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

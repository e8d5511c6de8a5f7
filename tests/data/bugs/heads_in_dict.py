# runtime: no-update: model.heads
"""A multi-label model with one head per attribute kept in a plain dict keyed by name."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ATTRIBUTES = {"color": 4, "shape": 3, "size": 2}


class AttributeNet(nn.Module):
    def __init__(self, attributes, dim=24):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, dim), nn.ReLU())
        self.heads = {name: nn.Linear(dim, n) for name, n in attributes.items()}  # <- GA109

    def forward(self, x):
        h = self.backbone(x)
        return {name: head(h) for name, head in self.heads.items()}


def train(model, optimizer, steps=3):
    for _ in range(steps):
        x = torch.randn(8, 12)
        targets = {name: torch.randint(0, n, (8,)) for name, n in ATTRIBUTES.items()}
        outputs = model(x)
        loss = sum(F.cross_entropy(outputs[k], targets[k]) for k in ATTRIBUTES)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
model = AttributeNet(ATTRIBUTES)
train(model, torch.optim.Adam(model.parameters(), lr=1e-3))

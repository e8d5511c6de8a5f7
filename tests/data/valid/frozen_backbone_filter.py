# runtime: trains
"""Linear probing: the backbone is frozen and the optimizer is built from the parameters that
still require grad; the backbone runs in eval mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.backbone(x))


def freeze(module):
    for p in module.parameters():
        p.requires_grad_(False)
    module.eval()


torch.manual_seed(0)
model = Probe()
freeze(model.backbone)
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
for step in range(4):
    x, y = torch.randn(12, 16), torch.randint(0, 5, (12,))
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()

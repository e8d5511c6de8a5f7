# runtime: no-update: model.head
"""Weight-decay groups collected in a `defaultdict(list)` by parameter name, walking only the
backbone's parameters: the classification head added to the network is in no group, so it keeps
its initial weights while its gradient is computed every step."""
from collections import defaultdict

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def build_optimizer(model, lr=0.1, weight_decay=1e-4):
    groups = defaultdict(list)
    for name, p in model.backbone.named_parameters():
        groups["no_decay" if name.endswith("bias") else "decay"].append(p)
    return torch.optim.SGD(  # <- GA108
        [
            {"params": groups["decay"], "weight_decay": weight_decay},
            {"params": groups["no_decay"], "weight_decay": 0.0},
        ],
        lr=lr,
    )


torch.manual_seed(0)
model = Net()
optimizer = build_optimizer(model)
for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

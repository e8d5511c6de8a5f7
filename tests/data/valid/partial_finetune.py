# runtime: trains
"""Fine-tune only the top layers: the bottom is frozen and the optimizer gets what still trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(12, 12) for _ in range(4)])
        self.head = nn.Linear(12, 2)

    def forward(self, x):
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.head(x)


def freeze_bottom(model, n):
    for layer in model.layers[:n]:
        layer.requires_grad_(False)


torch.manual_seed(8)
model = Tower()
freeze_bottom(model, 2)
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-2)
for step in range(3):
    x, y = torch.randn(10, 12), torch.randint(0, 2, (10,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

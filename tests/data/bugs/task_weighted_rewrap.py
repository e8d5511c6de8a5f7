# runtime: no-update: model
"""Multi-task loss balancing: the per-task losses are gathered with torch.tensor(...) to weight
them, which copies their values and drops the graph; requires_grad=True makes backward() run."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.cls = nn.Linear(32, 3)
        self.reg = nn.Linear(32, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h).squeeze(-1)


def weighted_total(losses, weights):
    stacked = torch.tensor(losses, requires_grad=True)  # <- GA104
    return (stacked * weights).sum()


def fit(model, optimizer, steps=4):
    weights = torch.tensor([1.0, 0.3])
    for step in range(steps):
        x = torch.randn(16, 10)
        labels = torch.randint(0, 3, (16,))
        targets = x.sum(dim=1)
        logits, value = model(x)
        loss = weighted_total([F.cross_entropy(logits, labels), F.smooth_l1_loss(value, targets)], weights)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: {loss.item():.3f}")


torch.manual_seed(0)
model = TwoHeads()
fit(model, torch.optim.SGD(model.parameters(), lr=0.05))

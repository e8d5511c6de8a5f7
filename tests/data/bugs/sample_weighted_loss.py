# runtime: error: grad can be implicitly created only for scalar outputs
"""Importance-weighted classification: the per-sample losses are weighted but never reduced."""
import torch
import torch.nn as nn


class WeightedCE(nn.Module):
    def __init__(self):
        super().__init__()
        self.ce = nn.CrossEntropyLoss(reduction="none")

    def forward(self, logits, target, weight):
        return self.ce(logits, target) * weight


def fit(model, optimizer, data):
    loss_fn = WeightedCE()
    for x, y, w in data:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y, w)
        loss.backward()  # <- GA305
        optimizer.step()


torch.manual_seed(0)
model = nn.Linear(7, 3)
data = [(torch.randn(10, 7), torch.randint(0, 3, (10,)), torch.rand(10)) for _ in range(2)]
fit(model, torch.optim.SGD(model.parameters(), lr=0.1), data)

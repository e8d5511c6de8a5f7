# runtime: trains
"""Per-dataset heads in an nn.ModuleDict, all added before the optimizer is built; the
per-sample loss with reduction='none' is weighted and reduced before backward()."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 12)
        self.heads = nn.ModuleDict()

    def add_head(self, name, classes):
        self.heads[name] = nn.Linear(12, classes)

    def forward(self, x, name):
        return self.heads[name](torch.relu(self.body(x)))


torch.manual_seed(0)
model = Shared()
for name, classes in (("a", 2), ("b", 4)):
    model.add_head(name, classes)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss(reduction="none")
for step in range(4):
    name, classes = ("a", 2) if step % 2 == 0 else ("b", 4)
    x, y, w = torch.randn(8, 6), torch.randint(0, classes, (8,)), torch.rand(8)
    per_sample = criterion(model(x, name), y)
    loss = (per_sample * w).sum() / w.sum().clamp_min(1e-8)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

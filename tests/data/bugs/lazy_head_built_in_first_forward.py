# runtime: no-update: model.head
"""A classifier builds its head on the first forward call, to size it from the features; nothing
runs the model before the optimizer is built, so the head is created during the first training
step, after `SGD(model.parameters())`, and is in no param group."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LazyClassifier(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(10, 24), nn.ReLU())
        self.classes = classes
        self.head = None

    def forward(self, x):
        h = self.features(x)
        if self.head is None:
            self.head = nn.Linear(h.shape[-1], self.classes)  # <- GA108
        return self.head(h)


torch.manual_seed(0)
model = LazyClassifier()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 0:
        head_at_start = model.head.weight.detach().clone()
assert torch.equal(head_at_start, model.head.weight)

# runtime: no-update: model.module.fc
"""A model wrapped in DataParallel, and after the optimizer is created the classifier of the
wrapped module is replaced for the new label set."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(12, 24), nn.ReLU())
        self.fc = nn.Linear(24, classes)

    def forward(self, x):
        return self.fc(self.features(x))


torch.manual_seed(0)
model = nn.DataParallel(Net())
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
model.module.fc = nn.Linear(24, 4)  # <- GA108
for step in range(3):
    x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

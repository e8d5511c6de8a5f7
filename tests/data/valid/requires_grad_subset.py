# runtime: trains
"""Only the classifier trains: the whole model is frozen with requires_grad_(False) and the
classifier unfrozen again; the optimizer is given every parameter (the frozen ones get no
gradient and Adam skips them)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(9, 18), nn.ReLU())
        self.classifier = nn.Linear(18, 3)

    def forward(self, x):
        return self.classifier(self.features(x))


torch.manual_seed(0)
model = Model()
model.requires_grad_(False)
model.classifier.requires_grad_(True)
optimizer = torch.optim.Adam(model.classifier.parameters(), lr=1e-2)
for step in range(3):
    x, y = torch.randn(10, 9), torch.randint(0, 3, (10,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

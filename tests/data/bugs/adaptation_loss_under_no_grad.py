# runtime: trains
"""Domain adaptation (DDC): the MMD term between source and target features is computed inside
`torch.no_grad()` (to save memory) and added to the classification loss. The term is then a
constant: it shifts the loss's value and sends no gradient, so the features are never pulled
together; the feature extractor trains on the classification loss alone."""
import torch
import torch.nn as nn


class MMDLoss(nn.Module):
    def forward(self, source, target):
        with torch.no_grad():  # <- GA102
            delta = source.mean(0) - target.mean(0)
            loss = delta.dot(delta)
        return loss


torch.manual_seed(0)
features = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
classifier = nn.Linear(3, 2)
mmd = MMDLoss()
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(list(features.parameters()) + list(classifier.parameters()), lr=0.1)
for step in range(3):
    xs, xt, y = torch.randn(8, 4), torch.randn(8, 4) + 1.0, torch.randint(0, 2, (8,))
    fs, ft = features(xs), features(xt)
    loss = criterion(classifier(fs), y) + 0.5 * mmd(fs, ft)
    opt.zero_grad()
    loss.backward()
    opt.step()

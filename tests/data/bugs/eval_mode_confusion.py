# runtime: error: does not require grad
"""A training method that reuses the evaluation forward pass, which runs under inference_mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3))

    @torch.inference_mode()  # <- GA102
    def predict_logits(self, x):
        return self.net(x)

    def training_loss(self, x, y):
        return F.cross_entropy(self.predict_logits(x), y)


torch.manual_seed(1)
clf = Classifier()
optimizer = torch.optim.SGD(clf.parameters(), lr=0.1)
for _ in range(2):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    loss = clf.training_loss(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

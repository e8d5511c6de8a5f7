# runtime: no-update: model
"""A detector's training loop (after a face detector's first release): the criterion lives in
losses.py, the loop zeroes the gradients, computes the losses and steps the optimizer, but never
calls backward(): every step applies no gradient and the model never changes. The finding is
placed at the step in this loop, the loss in losses.py being a related place."""
import torch
import torch.nn as nn
from losses import DetectionLoss


class Detector(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.loc = nn.Linear(32, 4)
        self.conf = nn.Linear(32, num_classes)

    def forward(self, x):
        h = self.body(x)
        return self.loc(h), self.conf(h)


torch.manual_seed(0)
model = Detector(3)
criterion = DetectionLoss(3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for iteration in range(5):
    x = torch.randn(8, 16)
    targets = (torch.randn(8, 4), torch.randint(0, 3, (8,)))
    out = model(x)
    optimizer.zero_grad()
    loss_l, loss_c = criterion(out, targets)
    loss = loss_l + loss_c
    optimizer.step()  # <- GA209
    print(f"iter {iteration} loss {loss.item():.4f}")

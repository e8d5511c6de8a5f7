# runtime: nonfinite
# confidence: suspicious
"""A focal loss helper that takes the log of softmax probabilities; on unnormalised pixel inputs
some probabilities underflow to exactly 0 and the loss becomes infinite."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def focal_loss(logits, target, gamma=2.0):
    probs = F.softmax(logits, dim=1)
    pt = probs.gather(1, target.unsqueeze(1)).squeeze(1)
    return (-(1 - pt) ** gamma * torch.log(pt)).mean()  # <- GA401


class SmallCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3)
        self.fc = nn.Linear(8 * 26 * 26, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.conv(x)), 1))


torch.manual_seed(0)
model = SmallCNN()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
for step in range(3):
    images = torch.randint(0, 256, (16, 1, 28, 28)).float()
    labels = torch.randint(0, 10, (16,))
    loss = focal_loss(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# runtime: no-update: model.classifier
"""Model and optimizer built by a helper; the caller swaps the classifier afterwards."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(9, 18), nn.ReLU())
        self.classifier = nn.Linear(18, n_classes)

    def forward(self, x):
        return self.classifier(self.features(x))


def build(n_classes=10, lr=0.05):
    model = Net(n_classes)
    return model, torch.optim.SGD(model.parameters(), lr=lr)


def train():
    torch.manual_seed(3)
    model, optimizer = build()
    model.classifier = nn.Linear(18, 4)  # <- GA108
    for _ in range(3):
        x, y = torch.randn(6, 9), torch.randint(0, 4, (6,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    train()

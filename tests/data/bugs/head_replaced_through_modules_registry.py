# runtime: no-update: model.head
"""A pretrained backbone fine-tuned on a new task: the optimizer is built first, then the head is
swapped by writing the module registry directly (`model._modules["head"] = ...`), which is what
`setattr` does for a module. The new head reaches the loss and gets gradient, but it is in no
param group, so it never changes."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.body(x))


def train():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model._modules["head"] = nn.Linear(16, 3)  # <- GA108
    for _ in range(3):
        x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    train()

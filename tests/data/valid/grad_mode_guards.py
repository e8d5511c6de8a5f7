# runtime: trains
"""Steps guarded by `torch.is_grad_enabled()` and by `model.training`, also called for evaluation
(under no_grad, and after model.eval())."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 3)

    def forward(self, x):
        return self.body(x)


torch.manual_seed(1)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)


def step_if_grad(x, y):
    loss = F.cross_entropy(model(x), y)
    if torch.is_grad_enabled():
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.detach()


def step_if_training(x, y):
    with torch.set_grad_enabled(model.training):
        loss = F.cross_entropy(model(x), y)
    if model.training:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.detach()


for _ in range(2):
    x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
    model.train()
    step_if_grad(x, y)
    step_if_training(x, y)
    model.eval()
    with torch.no_grad():
        step_if_grad(x, y)
    step_if_training(x, y)

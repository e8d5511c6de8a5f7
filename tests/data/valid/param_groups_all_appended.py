# runtime: trains
"""A trainer builds its optimizer from per-layer param groups, one list entry per group, each
appended before the name is bound to the next group: every group reaches the optimizer."""
import sys

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.body(x))


def make_net():
    return Net()


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.lr = lr

    def before_train(self):
        parameters = []
        params = {"lr": self.lr, "params": []}
        for name, param in self.model.named_parameters():
            if name.startswith("body"):
                params["params"].append(param)
        parameters.append(params)

        params = {"lr": 10 * self.lr, "params": []}
        for name, param in self.model.named_parameters():
            if name.startswith("head"):
                params["params"].append(param)
        parameters.append(params)

        self.optimizer = torch.optim.SGD(parameters, momentum=0.9)

    def train(self, steps=5):
        self.before_train()
        for _ in range(steps):
            x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


torch.manual_seed(0)
model = getattr(sys.modules[__name__], "make_" + "net")()
trainer = Trainer(model)
trainer.train()

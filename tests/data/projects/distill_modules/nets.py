import torch.nn as nn


def mlp(inp, hidden, out, depth=2):
    layers, d = [], inp
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.ReLU()]
        d = hidden
    layers.append(nn.Linear(d, out))
    return nn.Sequential(*layers)


class Student(nn.Module):
    def __init__(self, inp=8, classes=4):
        super().__init__()
        self.blocks = nn.ModuleList([mlp(inp, 16, 16, 1), mlp(16, 16, 16, 1)])
        self.out = nn.Linear(16, classes)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.out(x)

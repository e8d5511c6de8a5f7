"""Networks kept in a package folder named `torch` (rlkit's layout): `import torch` here is the
library, not the folder."""
import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, input_size, output_size, hidden=16):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden)
        self.last_fc = nn.Linear(hidden, output_size)

    def forward(self, x):
        return self.last_fc(torch.relu(self.fc(x)))


class FlattenMlp(Mlp):
    def forward(self, *inputs, **kwargs):
        return super().forward(torch.cat(inputs, dim=1), **kwargs)

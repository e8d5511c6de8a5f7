import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())

    def forward(self, x):
        return self.layers(x)


class Regressor(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.encoder = Encoder(dim)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.encoder(x)).squeeze(-1)

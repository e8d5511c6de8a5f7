import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        return self.proj(x)


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = Attention(d)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.attn(x))

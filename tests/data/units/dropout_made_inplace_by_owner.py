"""A feed-forward block in MVANet's style applies a dropout to the output of `F.relu`, which relu
saved for backward. The block builds `nn.Dropout(0.1)`, out of place; its owner then walks its
modules and switches every ReLU and Dropout to in-place. From then on the dropout overwrites the
saved output: any backward through the network raises "modified by an inplace operation". No
training step in this file uses it."""
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear1 = nn.Linear(d, 2 * d)
        self.linear2 = nn.Linear(2 * d, d)
        self.dropout = nn.Dropout(0.1)
        self.activation = F.relu

    def forward(self, x):
        return x + self.linear2(self.dropout(self.activation(self.linear1(x))))  # <- GA110


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.block = FeedForward(d)
        self.head = nn.Linear(d, 1)
        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True

    def forward(self, x):
        return self.head(self.block(x))

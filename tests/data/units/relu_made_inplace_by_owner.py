"""The same owner loop as dropout_made_inplace_by_owner.py, but it switches only ReLU modules to
in-place, and each ReLU follows a Linear, which saved its input, not its output: overwriting the
Linear's output is safe. The dropout stays out of place."""
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear1 = nn.Linear(d, 2 * d)
        self.act = nn.ReLU()
        self.linear2 = nn.Linear(2 * d, d)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.linear2(self.dropout(F.relu(self.act(self.linear1(x)))))


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.block = FeedForward(d)
        self.head = nn.Linear(d, 1)
        for m in self.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True

    def forward(self, x):
        return self.head(self.block(x))

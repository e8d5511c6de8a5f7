"""A chained residual pool (RefineNet): the input goes through an in-place ReLU, which saves its
result for backward, and every pooled path is then added into that result in place. Any backward
through the block raises "modified by an inplace operation". No training step in this file uses it."""
import torch.nn as nn


class ChainedResidualPool(nn.Module):
    def __init__(self, feats):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        for i in range(1, 3):
            self.add_module(
                f"block{i}",
                nn.Sequential(nn.MaxPool2d(5, stride=1, padding=2), nn.Conv2d(feats, feats, 3, padding=1, bias=False)),
            )

    def forward(self, x):
        x = self.relu(x)
        path = x
        for i in range(1, 3):
            path = self.__getattr__(f"block{i}")(path)
            x += path  # <- GA110
        return x

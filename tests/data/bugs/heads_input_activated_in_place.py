# runtime: error: modified by an inplace operation
"""Several heads read the same features (each linear layer saves its input for the weight's
gradient), then the features are activated in place after the heads' loop: the tensor the heads
saved changed. The features are not rebound in the loop, so after it they are still the saved
tensor."""
import os

import torch
import torch.nn as nn


class MultiHead(nn.Module):
    def __init__(self, n_heads):
        super().__init__()
        self.pre = nn.Linear(4, 8)
        self.heads = nn.ModuleList([nn.Linear(8, 2) for _ in range(n_heads)])

    def forward(self, x):
        feats = self.pre(x)
        out = 0
        for head in self.heads:
            out = out + head(feats)
        feats.relu_()  # <- GA110
        return out + feats.sum()


n_heads = int(os.environ.get("HEADS", "2"))
model = MultiHead(n_heads)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(5, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# reduction-of: encode-attend-navigate-pytorch@f4f672f751 module.py:134 GA110
# false: GA110
# quiet: GA110
"""A feed-forward block whose layers come from a comprehension over consecutive sizes
(`zip(sizes[:-1], sizes[1:])`), a ReLU after every layer but the last, then a residual added in
place to the last layer's output; three such blocks stacked in a ModuleList.

False finding: GA110 confirmed at `out += x`, "in-place change of a tensor that `relu` saved for
backward": the in-place add changes the last linear layer's output, which no op saves. The
comprehension's layers were one joined element, so the loop could not tell which iteration was
the last and the ReLU's output seemed to be the tensor changed. A comprehension over a known
sequence whose elements use its variable now makes each element on its own, in order.

Verified with torch 2.13 (CPU): three training steps, each backward succeeding. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, sizes=(6, 12, 6)):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def forward(self, x):
        out = x
        for i, layer in enumerate(self.layers):
            out = layer(out)
            if i < len(self.layers) - 1:
                out = F.relu(out)
        out += x
        return out


class Stack(nn.Module):
    def __init__(self, depth=3, width=6, hidden=12):
        super().__init__()
        self.blocks = nn.ModuleList([Block(sizes=[width, hidden, width]) for _ in range(depth)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x).squeeze(-1)


torch.manual_seed(0)
model = Stack()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(5, 6), torch.randn(5)
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("OK")

# runtime: error: unsupported operand type(s) for *: 'Tensor' and 'NoneType'
"""Magnitude-times-gradient pruning scores read the gradient of the masked weight, which is an
intermediate tensor: its .grad is None."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLinear(nn.Module):
    def __init__(self, inp, out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out, inp) * 0.1)
        self.bias = nn.Parameter(torch.zeros(out))
        self.register_buffer("mask", torch.ones(out, inp))

    def forward(self, x):
        self.masked = self.weight * self.mask
        return F.linear(x, self.masked, self.bias)


torch.manual_seed(0)
layer = MaskedLinear(6, 4)
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    opt.zero_grad()
    loss = F.cross_entropy(layer(x), y)
    loss.backward()
    scores = (layer.masked * layer.masked.grad).abs()  # <- GA306
    opt.step()

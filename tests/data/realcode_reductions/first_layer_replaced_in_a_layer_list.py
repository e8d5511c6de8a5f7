# reduction-of: DeepLabV3Plus-Pytorch@4e1087de98bc network/backbone/xception.py:104 GA110
# false: GA110
# quiet: GA110
"""An Xception block: its layers are collected in a list (in-place ReLU, separable conv, batch
norm, repeated), the first one replaced by a ReLU that is not in place (`rep[0] = nn.ReLU()`) or
dropped (`rep = rep[1:]`), then `nn.Sequential(*rep)`; the forward adds the skip branch in place
to the block's output.

False finding: GA110 suspicious at `x += skip` ("in-place change of a tensor that `relu` saved"):
`rep[0] = ...` was taken for an append, so the replacing ReLU looked like the block's last layer.
The block ends with a batch norm (or a max-pool), whose backward does not use its output.

Verified with torch 2.13 (CPU): backward through every configuration of the block runs, and the
block's weights train. Prints OK.
"""
import importlib

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, in_filters, out_filters, reps, strides=1, start_with_relu=True):
        super().__init__()
        self.skip = nn.Conv2d(in_filters, out_filters, 1, stride=strides, bias=False)
        rep = []
        filters = in_filters
        for i in range(reps):
            rep.append(nn.ReLU(inplace=True))
            rep.append(nn.Conv2d(filters, out_filters, 3, padding=1, bias=False))
            rep.append(nn.BatchNorm2d(out_filters))
            filters = out_filters
        if not start_with_relu:
            rep = rep[1:]
        else:
            rep[0] = nn.ReLU(inplace=False)
        if strides != 1:
            rep.append(nn.MaxPool2d(3, strides, 1))
        self.rep = nn.Sequential(*rep)

    def forward(self, inp):
        x = self.rep(inp)
        skip = self.skip(inp)
        x += skip
        return x


# built where the checker cannot see (the backbone's builder): the block is checked on its own
make = getattr(importlib.import_module(__name__), "Block")
for args in [(8, 8, 1), (8, 16, 2, 2), (8, 8, 3, 1, False)]:
    block = make(*args)
    opt = torch.optim.SGD(block.parameters(), lr=0.1)
    before = block.skip.weight.detach().clone()
    opt.zero_grad()
    block(torch.relu(torch.randn(2, 8, 9, 9))).sum().backward()
    opt.step()
    assert not torch.equal(before, block.skip.weight)
print("OK")

# runtime: error: can't optimize a non-leaf Tensor
"""Optimising an input (style transfer): the image is made a leaf with the old
`Variable(t, requires_grad=True)` and then, under a setting, converted with `.double()`. On the path
that converts it the name holds a non-leaf copy, and the optimizer raises "can't optimize a non-leaf
Tensor" (the same happens with `.cuda()` under `if cuda:` on a machine with a GPU)."""
import argparse

import torch
import torch.nn as nn
from torch.autograd import Variable

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="double")
args = parser.parse_args([])

features = nn.Conv2d(1, 8, kernel_size=(3, 1))
features.requires_grad_(False)
target = torch.randn(1, 8, 30, 20)

image = Variable(torch.randn(1, 1, 32, 20) * 1e-3, requires_grad=True)
if args.precision == "double":
    features = features.double()
    target = target.double()
    image = image.double()  # <- GA113
optimizer = torch.optim.Adam([image], lr=0.01)
for step in range(5):
    optimizer.zero_grad()
    loss = (features(image) - target).pow(2).mean()
    loss.backward()
    optimizer.step()

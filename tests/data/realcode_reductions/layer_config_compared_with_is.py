# reduction-of: MAML-Pytorch@98a00d41724c learner.py:171 GA110
# false: GA110
"""A functional network walks a configuration of (name, args) pairs and picks each layer with
`name is 'relu'`, an identity test of strings that works because CPython interns such literals (it
warns about it). The in-place ReLU follows a conv2d here, never the transposed convolution of
another arm.

False finding: GA110 confirmed at `F.relu(x, inplace=param[0])`: "in-place change of a tensor that
`conv_transpose2d` saved for backward". The configuration's pairs are walked one by one (a function
that does not train walks pairs led by a constant), but `name is "convt2d"` was undecided, so every
arm ran for every layer, and the ReLU met the input another arm's convolution saved. An identity
test of two strings from the code is now decided as equality.

Verified with torch 2.13 (CPU): backward() runs, every parameter gets a gradient. Prints OK.
"""
import warnings

import torch
import torch.nn.functional as F

warnings.simplefilter("ignore", SyntaxWarning)
config = [("conv2d", [8, 1, 3, 3]), ("relu", [True]), ("conv2d", [8, 8, 3, 3]), ("relu", [True])]
params = []
for name, shape in config:
    if name == "conv2d":
        params += [torch.randn(*shape, requires_grad=True), torch.zeros(shape[0], requires_grad=True)]
opt = torch.optim.SGD(params, lr=0.01)


def forward(x):
    idx = 0
    for name, param in config:
        if name is "conv2d":
            x = F.conv2d(x, params[idx], params[idx + 1])
            idx += 2
        elif name is "convt2d":
            x = F.conv_transpose2d(x, params[idx], params[idx + 1])
            idx += 2
        elif name is "relu":
            x = F.relu(x, inplace=param[0])
    return x


for _ in range(3):
    loss = forward(torch.randn(4, 1, 12, 12)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    assert all(p.grad is not None for p in params)
    opt.step()
print("OK")

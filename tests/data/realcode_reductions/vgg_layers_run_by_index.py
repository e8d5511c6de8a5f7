# reduction-of: ssd.pytorch@5b0b77faa955 ssd.py:75 GA110
# false: GA110
# quiet: GA110
"""SSD's VGG: the layers are built from a configuration list (`[64, 64, "M", ...]`) by a helper
that appends a conv and an in-place ReLU per number and a max-pool per "M", kept in an
nn.ModuleList, and `forward` runs them by index: `for k in range(23): x = self.vgg[k](x)`, then
`for k in range(23, len(self.vgg))`.

False finding: GA110 confirmed at `x = self.vgg[k](x)`: "in-place change of a tensor that
`max_pool2d` saved for backward". Every in-place ReLU follows a conv, which does not save its
output; no ReLU follows a pool. The engine ran one joined layer per iteration (the list's layers
in an unknown order, `len(self.vgg)` unknown), so a ReLU seemed to follow a pool. The list is now
built one configuration entry at a time, the ModuleList keeps its layers in order, `len()` of it
is known and the index loops run the layers in turn; a change made by one of several joined
modules is never taken for certain.

Verified with torch 2.13 (CPU): backward runs and every parameter gets a gradient. Prints OK.
"""
import torch
import torch.nn as nn

base = {"32": [8, 8, "M", 16, 16, "M", 32, 32]}


def vgg(cfg, i):
    layers = []
    in_channels = i
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return layers


class Net(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.vgg = nn.ModuleList(vgg(base[str(size)], 3))
        self.head = nn.Conv2d(32, 4, 1)

    def forward(self, x):
        for k in range(8):
            x = self.vgg[k](x)
        mid = x
        for k in range(8, len(self.vgg)):
            x = self.vgg[k](x)
        return self.head(x).mean() + mid.mean()


net = Net(32)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(2):
    loss = net(torch.randn(2, 3, 16, 16)).pow(2)
    opt.zero_grad()
    loss.backward()
    assert all(p.grad is not None for p in net.parameters())
    opt.step()
print("OK")

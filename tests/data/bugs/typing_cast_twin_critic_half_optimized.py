# runtime: no-update: critic.c2
"""After Pearl's twin critic: the network class is passed through `typing.cast(Type[QNet], ...)`
for the type checker before it is called. The optimizer is given the first critic's parameters
only, yet both critics reach the loss (their minimum): the second one gets gradients and never
changes. Checked with torch 2.13 (CPU): `critic.c2` ends exactly as it started."""
from typing import Type, cast

import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.f = nn.Linear(d, 1)

    def forward(self, x):
        return self.f(x)


class Twin(nn.Module):
    def __init__(self, d, network_type=QNet):
        super().__init__()
        network_type = cast(Type[QNet], network_type)
        self.c1 = network_type(d)
        self.c2 = network_type(d)

    def forward(self, x):
        return torch.minimum(self.c1(x), self.c2(x))


critic = Twin(4)
opt = torch.optim.Adam(critic.c1.parameters(), lr=0.01)  # <- GA108
for _ in range(5):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = (critic(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: error: modified by an inplace operation
"""A NoisyNet layer picked by a flag (`linear = NoisyLinear if args.noisy else nn.Linear`) and used
twice in one forward: its second call redraws `out_noise` in place after the first call's
`noisy_bias * out_noise` saved it. The engine follows the project's class (a value that is one of
two library names would call each). Verified with torch: backward() raises."""
import argparse

import torch
import torch.nn as nn


class NoisyLinear(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(o, i) * 0.1)
        self.noisy_bias = nn.Parameter(torch.randn(o) * 0.1)
        self.register_buffer("out_noise", torch.zeros(o))

    def forward(self, x):
        self.out_noise.normal_(0, 1.0)  # <- GA110
        return nn.functional.linear(x, self.weight, self.noisy_bias * self.out_noise)


parser = argparse.ArgumentParser()
parser.add_argument("--noisy", type=int, default=1)
args = parser.parse_args([])
linear = NoisyLinear if args.noisy else nn.Linear
torch.manual_seed(0)
extra = linear(4, 4)
opt = torch.optim.SGD(extra.parameters(), lr=0.1)
for i in range(3):
    x = torch.randn(2, 4)
    loss = extra(extra(x)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()

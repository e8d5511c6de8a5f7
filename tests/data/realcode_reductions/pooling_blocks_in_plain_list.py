# reduction-of: LTSF-Linear@0c113668a3b8 FEDformer/layers/Autoformer_EncDec.py:61 GA109
# false: GA109
# quiet: GA109
"""Autoformer's multi-kernel series decomposition: a plain list of moving-average blocks, each an
`nn.AvgPool1d` and a kernel size, beside a registered `nn.Linear` that weighs them. The class is
only defined here (the models that use it live in other files).

False finding: GA109 suspicious: "a plain list of modules: `.parameters()`, `.to()` and
`state_dict()` never see their parameters". The blocks have no parameters and no buffers, so the
plain list hides nothing. Checked on its own, the class built its project submodules shallowly,
each standing for unknown parameters; a project class that can be read to hold no state (every
attribute a parameter-free torch module, a plain value, or such a class) now needs no stand-in.
(Time-Series-Library's copy of the class drew the same finding.)

Verified with torch 2.13 (CPU): parameters() and state_dict() of the class are those of the
Linear alone, and a ModuleList of the blocks would add nothing. Prints OK.
"""
import math

import torch
import torch.nn as nn


class MovingAvg(nn.Module):
    def __init__(self, kernel_size, stride):
        super().__init__()
        self.kernel_size = kernel_size
        self.avg = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=0)

    def forward(self, x):
        front = x[:, 0:1, :].repeat(1, self.kernel_size - 1 - math.floor((self.kernel_size - 1) // 2), 1)
        end = x[:, -1:, :].repeat(1, math.floor((self.kernel_size - 1) // 2), 1)
        x = torch.cat([front, x, end], dim=1)
        return self.avg(x.permute(0, 2, 1)).permute(0, 2, 1)


class SeriesDecompMulti(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.moving_avg = [MovingAvg(kernel, stride=1) for kernel in kernel_size]
        self.layer = torch.nn.Linear(1, len(kernel_size))

    def forward(self, x):
        moving_mean = []
        for func in self.moving_avg:
            moving_mean.append(func(x).unsqueeze(-1))
        moving_mean = torch.cat(moving_mean, dim=-1)
        moving_mean = torch.sum(moving_mean * nn.Softmax(-1)(self.layer(x.unsqueeze(-1))), dim=-1)
        return x - moving_mean, moving_mean


if __name__ == "__main__":
    # looked up by name: this check is no use of the class the engine follows, which keeps the class
    # checked on its own, as in the project (its users live in other files)
    m = globals()["SeriesDecompMulti"]([3, 5, 7])
    assert sorted(m.state_dict()) == ["layer.bias", "layer.weight"]
    assert len(list(m.parameters())) == 2
    assert not list(nn.ModuleList(m.moving_avg).parameters()) and not nn.ModuleList(m.moving_avg).state_dict()
    res, mean = m(torch.randn(2, 12, 4))
    assert res.shape == mean.shape == (2, 12, 4)
    print("OK")

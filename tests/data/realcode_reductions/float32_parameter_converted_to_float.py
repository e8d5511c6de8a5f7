# reduction-of: Time-Series-Library@4e938a176710 layers/MambaBlock.py:152 GA113
# false: GA113
# quiet: GA113
"""A Mamba block as Time-Series-Library writes it: the skip weight is made with
`self.D = nn.Parameter(torch.ones(d_inner, device=device)).float()`.

False finding: GA113 suspicious, "makes a new tensor from the one created with requires_grad=True:
the module keeps that result". The parameter is float32 (torch's default, no dtype given where it
is made), and `.float()` of a float32 tensor returns that tensor itself, so the module registers
the Parameter and the optimizer trains it. A parameter made in another dtype is still reported
(bugs/half_parameter_converted_to_float.py).

Verified with torch 2.13 (CPU): `m.D` is among `m.parameters()` and changes over three steps.
Prints OK.
"""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d=8, use_d=True, device=None):
        super().__init__()
        self.lin = nn.Linear(d, d)
        if use_d:
            self.D = nn.Parameter(torch.ones(d, device=device)).float()
            self.D._no_weight_decay = True
        else:
            self.D = None

    def forward(self, x):
        y = self.lin(x)
        return y + x * self.D if self.D is not None else y


torch.manual_seed(0)
m = Block()
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
assert any(p is m.D for p in m.parameters())
before = m.D.detach().clone()
for it in range(3):
    loss = m(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
assert not torch.equal(before, m.D.detach())
print("OK")

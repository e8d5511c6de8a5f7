# reduction-of: pytorch_geometric@5c6461b2305a examples/ogc.py:83 GA206
# false: GA206
"""A method that builds a plain SGD optimizer and takes one step, called once per outer iteration.

The real code (OGC on Cora): `update_W` builds `torch.optim.SGD(self.parameters(), lr=eta_W)`, clears,
backpropagates a sum-reduced MSE and steps; the outer loop alternates it with a closed-form update
of the features.

False finding: GA206 confirmed: "`optimizer` (SGD) is built anew in every iteration of the training
loop: its state (momentum, ...) starts from zero at each step". SGD without momentum (the default)
keeps no state: torch stores a momentum buffer only when momentum != 0, so a fresh SGD steps exactly
like one built once.

Verified with torch 2.13 (CPU): rebuilding the SGD at each step gives the same weights as one SGD
kept across the steps, and its state is empty after a step. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.W = nn.Linear(4, 3, bias=False)

    def forward(self, x):
        return self.W(x)

    def update_W(self, U, Y, lr=0.05):
        optimizer = torch.optim.SGD(self.parameters(), lr=lr)
        optimizer.zero_grad()
        F.mse_loss(self(U), Y, reduction="sum").backward()
        optimizer.step()
        assert not optimizer.state_dict()["state"]
        return self(U).detach()


torch.manual_seed(0)
U, Y = torch.randn(16, 4), torch.randn(16, 3)
model = Linear()
kept = Linear()
kept.load_state_dict(model.state_dict())
kept_opt = torch.optim.SGD(kept.parameters(), lr=0.05)
for _ in range(5):
    model.update_W(U, Y)
    kept_opt.zero_grad()
    F.mse_loss(kept(U), Y, reduction="sum").backward()
    kept_opt.step()
assert torch.allclose(model.W.weight, kept.W.weight)
print("OK")

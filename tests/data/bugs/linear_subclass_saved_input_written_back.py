# runtime: error: modified by an inplace operation
"""A project's own `Linear(nn.Linear)` (a custom initialisation, forward inherited) after a layer
norm: each row of the pair tensor is normalised, projected and written back into the tensor in
place. The layer norm saved that row, a view of the tensor, for its backward: the write bumps its
version and backward raises."""
import torch
import torch.nn as nn


class Linear(nn.Linear):
    def __init__(self, c_in, c_out):
        super().__init__(c_in, c_out)
        nn.init.zeros_(self.bias)


class RowUpdate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.norm = nn.LayerNorm(c)
        self.linear = Linear(c, c)

    def forward(self, x):
        z = self.proj(x)
        for i in range(z.shape[1]):
            row = z[:, i]
            z[:, i] = row + self.linear(self.norm(row))  # <- GA110
        return z


torch.manual_seed(0)
model = RowUpdate(4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(2, 3, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

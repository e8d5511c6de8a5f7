# runtime: trains
"""The row update with the project's own `Linear(nn.Linear)`, written out of place: the updated rows
are collected and stacked into a new tensor, so the rows the layer norm saved stay unchanged."""
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
        rows = []
        for i in range(z.shape[1]):
            row = z[:, i]
            rows.append(row + self.linear(self.norm(row)))
        return torch.stack(rows, dim=1)


torch.manual_seed(0)
model = RowUpdate(4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(2, 3, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

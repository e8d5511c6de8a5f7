# runtime: error: Trying to use a saved tensor that has been detached in-place
"""An actor-critic with a recurrent cell: the update detaches the carried state in place,
`hx.detach_()`, before the backward(). The value and policy heads saved that very tensor as their
input, so the backward() cannot use it: torch raises at the first update."""
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(4, 8)
value_head = nn.Linear(8, 1)
opt = torch.optim.Adam([*cell.parameters(), *value_head.parameters()], lr=1e-3)
hx = torch.zeros(1, 8)
values = []
for t in range(1, 21):
    hx = cell(torch.randn(1, 4), hx)
    values.append(value_head(hx))
    if t % 5 == 0:
        loss = torch.cat(values).pow(2).mean()
        opt.zero_grad()
        hx.detach_()  # <- GA110
        loss.backward()
        opt.step()
        values = []

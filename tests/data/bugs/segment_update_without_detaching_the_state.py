# runtime: error: Trying to backward through the graph a second time
"""An actor-critic with a recurrent cell updated every 20 steps (A3C's T_MAX): the segment's values
are reset after each update, but the carried hidden state is not detached, so the first step of
the next segment builds on the graph the update's backward() just freed."""
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.Adam([*cell.parameters(), *head.parameters()], lr=1e-3)
for episode in range(2):
    hx = torch.zeros(1, 8)
    values = []
    for t in range(1, 41):
        hx = cell(torch.randn(1, 4), hx)  # <- GA301
        values.append(head(hx))
        if t % 20 == 0:
            loss = torch.cat(values).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            values = []

# runtime: error: modified by an inplace operation
"""An LSTM cell written by hand: the output gate is applied with an in-place multiply on the tanh
of the cell state, which tanh saved for its backward."""
import torch
import torch.nn as nn


class MyLSTMCell(nn.Module):
    def __init__(self, inp, hid):
        super().__init__()
        self.gates = nn.Linear(inp + hid, 4 * hid)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(torch.cat([x, h], dim=1)).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.tanh(c)
        h.mul_(torch.sigmoid(o))  # <- GA110
        return h, c


torch.manual_seed(0)
cell = MyLSTMCell(5, 8)
head = nn.Linear(8, 1)
opt = torch.optim.Adam(list(cell.parameters()) + list(head.parameters()), lr=1e-3)
for it in range(2):
    h, c = torch.zeros(4, 8), torch.zeros(4, 8)
    for t in range(3):
        h, c = cell(torch.randn(4, 5), (h, c))
    loss = head(h).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: error: modified by an inplace operation
"""The "Trying to backward through the graph a second time" error of a carried memory was
silenced with retain_graph=True; the next backward reaches weights that step() changed."""
import torch
import torch.nn as nn


class Memory(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.cell = nn.GRUCell(dim, dim)
        self.readout = nn.Linear(dim, 1)

    def forward(self, x, mem):
        mem = self.cell(x, mem)
        return self.readout(mem), mem


torch.manual_seed(0)
model = Memory(6)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
mem = torch.zeros(4, 6)
for t in range(5):
    x, target = torch.randn(4, 6), torch.randn(4, 1)
    pred, mem = model(x, mem)
    loss = (pred - target).pow(2).mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)  # <- GA302
    opt.step()

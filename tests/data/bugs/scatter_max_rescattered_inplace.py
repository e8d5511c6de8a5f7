# runtime: error: modified by an inplace operation
"""Max-pooling node features into their graphs with two in-place scatters: the first scatters the
messages (which require grad) into a fresh tensor, and `scatter_reduce` with "amax" saves its
result for backward; the second scatters a residual into that same tensor in place."""
import torch
import torch.nn as nn


class MaxPoolGraphs(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.msg = nn.Linear(dim, dim)
        self.res = nn.Linear(dim, dim)

    def forward(self, x, batch, graphs):
        index = batch.view(-1, 1).expand(-1, x.size(1))
        out = x.new_zeros(graphs, x.size(1)).scatter_reduce_(0, index, self.msg(x), reduce="amax")
        out.scatter_reduce_(0, index, self.res(x), reduce="amax")  # <- GA110
        return out


model = MaxPoolGraphs()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, batch = torch.randn(6, 4), torch.tensor([0, 0, 1, 1, 2, 2])
for _ in range(3):
    opt.zero_grad()
    loss = model(x, batch, 3).pow(2).mean()
    loss.backward()
    opt.step()

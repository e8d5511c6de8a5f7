# runtime: error: modified by an inplace operation
"""Self-loop attributes filled by a max over the incoming edges (a string fill value picks the
reduction), then the existing self-loops' attributes written into that result in place: autograd
saved the scatter max's result, so backward() raises."""
import torch
import torch.nn as nn


def loop_attr_for(edge_attr, col, n, fill_value):
    if isinstance(fill_value, (int, float)):
        return edge_attr.new_full((n,), fill_value)
    elif isinstance(fill_value, str):
        out = edge_attr.new_zeros((n,))
        return out.scatter_reduce_(0, col, edge_attr, reduce="a" + fill_value, include_self=False)
    raise ValueError(fill_value)


def add_self_loops(edge_index, edge_attr, fill_value, n):
    loops = edge_index[0] == edge_index[1]
    loop_attr = loop_attr_for(edge_attr, edge_index[1], n, fill_value)
    loop_attr[edge_index[0][loops]] = edge_attr[loops]  # <- GA110
    return torch.cat([edge_attr[~loops], loop_attr])


torch.manual_seed(0)
scorer = nn.Linear(2, 1)
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 2, 0, 3]])
for step in range(2):
    opt.zero_grad()
    w = scorer(torch.randn(5, 2)).view(-1)
    loss = add_self_loops(edge_index, w, "max", 4).sum()
    loss.backward()
    opt.step()

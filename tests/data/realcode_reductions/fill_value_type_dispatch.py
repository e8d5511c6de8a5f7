# reduction-of: pytorch_geometric@5c6461b2305a torch_geometric/utils/loop.py:642 GA110
# false: GA110
# quiet: GA110
"""Self-loop attributes chosen by the type of a fill value: a number fills a new tensor, a string
names a reduction over the incoming edges (a scatter max whose result autograd saves); the
self-loops' own attributes are then written into it in place.

The real code (PyG utils/loop.py, nn/conv/gcn_conv.py): `gcn_norm` sets `fill_value = 2. if improved
else 1.` and calls `add_remaining_self_loops(edge_index, edge_weight, fill_value, N)`, whose
`compute_loop_attr` returns `edge_attr.new_full(size, fill_value)` when `isinstance(fill_value, (int,
float))` and `scatter(edge_attr, col, 0, N, fill_value)` (a `scatter_reduce_` with amax) when
`isinstance(fill_value, str)`; then `loop_attr[edge_index[0][inv_mask]] = edge_attr[inv_mask]`.

False finding: GA110 at that index assignment, "in-place change of a tensor that `scatter_reduce`
saved for backward: `out.backward()` raises" (confirmed). The fill value is a float on every path:
`isinstance(fill_value, str)` is False, and the tensor written in place is the fresh `new_full`.

Verified with torch 2.13 (CPU): with either float fill value the weights get their gradient (with
"max" backward would raise, as the finding says of that other path:
tests/data/bugs/self_loops_filled_by_max_reduction.py). Prints OK.
"""
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
    loop_attr[edge_index[0][loops]] = edge_attr[loops]
    return torch.cat([edge_attr[~loops], loop_attr])


def norm(edge_index, edge_weight, n, improved=False):
    fill_value = 2.0 if improved else 1.0
    return add_self_loops(edge_index, edge_weight, fill_value, n)


torch.manual_seed(0)
scorer = nn.Linear(2, 1)
edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 2, 0, 3]])
for improved in (False, True):
    scorer.zero_grad()
    w = scorer(torch.randn(5, 2)).view(-1)
    norm(edge_index, w, 4, improved).sum().backward()
    assert scorer.weight.grad is not None and scorer.weight.grad.abs().sum() > 0
print("OK")

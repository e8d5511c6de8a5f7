# reduction-of: pytorch_geometric@5c6461b2305a torch_geometric/utils/_scatter.py:111 GA110
# false: GA110
# quiet: GA110
"""A segment max written as two in-place scatter reductions into a fresh zeros tensor: the first
writes a constant fill value, the second the features; the features come from a model the
training function is given.

The real code (PyG utils/_scatter.py, the branch for ONNX export): `fill = torch.full(...)
.expand_as(src)`, `out = src.new_zeros(size).scatter_reduce_(dim, index, fill, reduce='amax',
include_self=True)` (here include_self=False, so that the fill replaces the zeros), then `return out.scatter_reduce_(dim, index, src, reduce='amax',
include_self=True)`; reached from examples/pointnet2_classification.py, whose model the engine
could not follow.

False finding: GA110 at the second scatter_reduce_, "in-place change of a tensor that
`scatter_reduce` saved for backward: `loss.backward()` raises" (confirmed). Neither input of the
first scatter_reduce_ requires grad (a fresh zeros tensor and a constant fill), so autograd records
nothing there and saves no `out`; the second one is the first op of the graph.

Verified with torch 2.13 (CPU): backward runs and the model's weights get their gradient. Prints OK.
"""
import torch
import torch.nn as nn


def segment_max(src, index, n):
    index = index.view(-1, 1).expand_as(src)
    fill = torch.full((1,), -1e4, dtype=src.dtype).expand_as(src)
    out = src.new_zeros((n, src.size(1))).scatter_reduce_(0, index, fill, reduce="amax", include_self=False)
    return out.scatter_reduce_(0, index, src, reduce="amax", include_self=True)


def train(model, batches, optimizer):
    for x, index in batches:
        optimizer.zero_grad()
        loss = segment_max(model(x), index, 3).sum()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    # looked up by name: the caller lives in another file, so the engine runs `train` on unknown
    # arguments, as it did on the project's example
    torch.manual_seed(0)
    model = nn.Linear(3, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    globals()["train"](model, [(torch.randn(5, 3), torch.tensor([0, 1, 1, 2, 0]))] * 2, optimizer)
    assert model.weight.grad is not None and model.weight.grad.abs().sum() > 0
    print("OK")

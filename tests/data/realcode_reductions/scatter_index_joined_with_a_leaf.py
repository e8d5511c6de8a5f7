# reduction-of: pytorch_geometric@5c6461b2305a torch_geometric/utils/_scatter.py:111 GA110
# false: GA110, GA303
"""A benchmark helper makes every floating argument of a function a leaf (`require_grad` walks a
tuple by calling itself), then calls each function on the arguments (`func(*args)`). The engine
does not follow the recursion, so each argument may be the leaf: the integer `index` too. A
two-stage scatter max first writes a constant (a tensor filled from a Python number, no gradient)
into a fresh tensor, then scatters the source into it in place.

False finding: GA110 confirmed at the second `scatter_reduce_`: "in-place change of a tensor
that `scatter_reduce` saved for backward", the save taken at the first one because the index
looked like it might require grad. The index of a scatter takes no gradient (derivatives.yaml:
only self and src do), so nothing flows into the first result and nothing is saved there.
GA303 confirmed at `grads.append(given[0].grad)`: the `.grad` of a value the engine partly could
not see was given that value's graph; a gradient is kept, not the forward's graph.

Verified with torch 2.13 (CPU): backward runs and the source gets its gradient. Prints OK.
"""
import torch


def require_grad(x, flag=True):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.detach().requires_grad_(flag)
    if isinstance(x, tuple):
        return tuple(require_grad(v, flag) for v in x)
    return x


def scatter_max(src, index, size):
    index = index.view(-1, 1).expand_as(src)
    fill = torch.full((1,), fill_value=float(src.detach().min()), dtype=src.dtype).expand_as(src)
    out = src.new_zeros(size).scatter_reduce_(0, index, fill, reduce="amax", include_self=True)
    return out.scatter_reduce_(0, index, src, reduce="amax", include_self=True)


def benchmark(funcs, args, steps=2):
    args_list = [args] * len(funcs) if not isinstance(args, list) else args
    grads = []
    for func, inputs in zip(funcs, args_list):
        for _ in range(steps):
            given = inputs() if callable(inputs) else inputs
            given = require_grad(given, True)
            out = func(*given)
            out.backward(torch.ones_like(out))
            grads.append(given[0].grad)
    return grads


x = torch.randn(6, 4)
index = torch.tensor([0, 0, 1, 1, 2, 2])
grads = benchmark([scatter_max], (x, index, (3, 4)))
assert all(g is not None and g.abs().sum() > 0 for g in grads)
print("OK")

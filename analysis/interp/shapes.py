"""Tensor shapes, as far as the source says them.

A shape is a tuple of dimensions (an int, or None when unknown) or None when even the rank is
unknown. Only what constants in the code fix is known (`torch.randn(32, 4)`, `nn.Linear(4, 16)`,
`.sum()`); everything else stays unknown. The backward rules use it to prove that a loss is not a
scalar (GA305): any dimension known to be larger than 1 means `numel() != 1`.
"""

from __future__ import annotations

from ..ops import torch_api as T

# the reductions (a torch fact, from ops/torch_api.py), which results.py asks for here
REDUCTIONS = T.REDUCTIONS


def known(shape) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


def nonscalar(shape) -> bool:
    """numel() is certainly not 1: some dimension is known to be larger than 1."""
    return shape is not None and any(isinstance(d, int) and d > 1 for d in shape)


def join(a, b):
    if a == b:
        return a
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def broadcast(a, b):
    """The shape of `a op b` under broadcasting; () for a Python number."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        else:
            return None  # does not broadcast: leave it to torch
    return tuple(out)


def _axis(dim, rank):
    if not isinstance(dim, int) or isinstance(dim, bool) or rank is None:
        return None
    if dim < 0:
        dim += rank
    return dim if 0 <= dim < rank else None


def reduce(shape, dim=None, keepdim=False, has_dim=False):
    """A reduction over `dim` (all dimensions when none is given)."""
    if not has_dim:
        return ()
    if shape is None:
        return None
    dims = dim if isinstance(dim, tuple) else (dim,)
    axes = set()
    for d in dims:
        a = _axis(d, len(shape))
        if a is None:
            return None
        axes.add(a)
    if keepdim is True:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    if keepdim is not False:
        return None
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def squeeze(shape, dim=None, has_dim=False):
    if shape is None:
        return None
    if not has_dim:
        if not known(shape):
            return None
        return tuple(s for s in shape if s != 1)
    a = _axis(dim, len(shape))
    if a is None:
        return None
    return shape[:a] + shape[a + 1 :] if shape[a] == 1 else (shape if isinstance(shape[a], int) else None)


def unsqueeze(shape, dim):
    if shape is None or not isinstance(dim, int):
        return None
    n = len(shape) + 1
    a = dim + n if dim < 0 else dim
    if not 0 <= a < n:
        return None
    return shape[:a] + (1,) + shape[a:]


def view(shape, sizes):
    """`.view(*sizes)`/`.reshape(...)`: the sizes given, with a -1 solved when the total is known."""
    if not sizes or not all(isinstance(s, int) for s in sizes):
        return None
    if sizes.count(-1) > 1:
        return None
    if -1 in sizes:
        if not known(shape):
            return tuple(None if s == -1 else s for s in sizes)
        total = 1
        for s in shape:
            total *= s
        rest = 1
        for s in sizes:
            if s != -1:
                rest *= s
        if rest == 0 or total % rest:
            return None
        return tuple(total // rest if s == -1 else s for s in sizes)
    return tuple(sizes)


def matmul(a, b):
    if a is None or b is None or not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(b) == 1:
        return a[:-1]
    if len(a) == 1:
        return b[:-2] + b[-1:]
    batch = broadcast(a[:-2], b[:-2])
    if batch is None:
        return None
    return batch + (a[-2], b[-1])


def index(shape, key):
    """`x[key]` for a constant int or a slice (a tensor or a list index stays unknown)."""
    if shape is None or not shape:
        return None
    if key == "slice":
        return (None,) + shape[1:]
    if isinstance(key, int) and not isinstance(key, bool):
        return shape[1:]
    return None

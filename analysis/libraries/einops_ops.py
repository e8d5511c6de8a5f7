"""einops' functions as the torch operations they run, known by name whether einops is installed
or not (as torch is).

einops is thin Python over the tensor library's own ops (`rearrange` is a permute and a reshape,
`repeat` an expand and a reshape, `reduce` a reduction); read as unseen code, each call lost what
its input carried: the graph's saved tensors (an in-place change after it went unseen, GA110),
its values' facts (a norm or a mask sum reaching a division, GA402).
"""

from __future__ import annotations

import re

from ..interp.values import Kind, Star, V, const
from ..torch import tensors

_FUNCTIONS = frozenset(("rearrange", "repeat", "reduce", "einsum"))
_TOKEN = re.compile(r"\(([^)]*)\)|(\.\.\.|\w+)")
_REDUCTIONS = {"mean": "mean", "sum": "sum", "max": "amax", "min": "amin", "prod": "prod"}


def is_einops(qual: str, head: str, short: str) -> bool:
    return head in ("einops", "einops.einops", "einops._torch_specific") and short in _FUNCTIONS


def einops_call(ip, qual, args, kwargs, node, env) -> V | None:
    short = qual.rpartition(".")[2]
    argv = [a.value if isinstance(a, Star) else a for a in args]
    if any(isinstance(a, Star) for a in args) or not argv or not all(isinstance(a, V) for a in argv):
        return None  # `rearrange(*xs, ...)`: which argument is which is not known
    if short == "einsum":
        # einops.einsum(x, y, "b i d, b j d -> b i j"): the pattern comes last, torch's first
        return tensors.torch_function(ip, "einsum", [argv[-1], *argv[:-1]], {}, node, env)
    x = argv[0]
    if x.k & (Kind.LIST | Kind.TUPLE) and not x.k & Kind.TENSOR:
        x = tensors.torch_function(ip, "stack", [x], {}, node, env)  # a list of tensors is stacked first
    pattern = argv[1].const if len(argv) > 1 else kwargs["pattern"].const if "pattern" in kwargs else None
    if short in ("rearrange", "repeat"):
        if isinstance(pattern, str) and is_view(pattern):
            # a view of `x` (an in-place write to it changes `x`): `expand` for new axes
            view = "expand" if short == "repeat" else "reshape"
            return ip.sem.tensors.method(ip, x, view, [V(Kind.NUMBER)], {}, node, env)
        return ip.sem.tensors.method(ip, x, "clone", [], {}, node, env)  # a copy
    how = argv[2].const if len(argv) > 2 else kwargs["reduction"].const if "reduction" in kwargs else None
    op = _REDUCTIONS.get(how) if isinstance(how, str) else None
    if op is None:
        return None  # a callable reduction, or one not known: unseen
    whole = isinstance(pattern, str) and "->" in pattern and not pattern.split("->", 1)[1].strip()
    # a reduction to nothing (`"b c ->"`) is a scalar; otherwise some axes are kept
    return tensors.torch_function(ip, op, [x] if whole else [x, const(-1)], {}, node, env)


def _axes(side: str) -> tuple[list[str], list[list[str]]]:
    """The named axes of one side of a pattern in order, and its parenthesised groups."""
    names: list[str] = []
    groups: list[list[str]] = []
    for m in _TOKEN.finditer(side):
        if m.group(1) is not None:
            inner = [t for t in m.group(1).split() if not t.isdigit()]
            names.extend(inner)
            groups.append(inner)
        elif not m.group(2).isdigit():
            names.append(m.group(2))
    return names, groups


def is_view(pattern: str) -> bool:
    """Whether torch gives a view of the input for this pattern (contiguous input): axes split,
    merged in their order, moved (a permute) or added (an expand) are views; merging axes that were
    moved, or a new axis with others, copies. Unsure means a copy: a view taken for a copy loses a
    finding, a copy taken for a view makes one up."""
    if "->" not in pattern:
        return False
    left, right = pattern.split("->", 1)
    lnames, _ = _axes(left)
    rnames, rgroups = _axes(right)
    moved = [n for n in rnames if n in lnames] != [n for n in lnames if n in rnames]
    new = set(rnames) - set(lnames)
    return not any(len(g) > 1 and (moved or new & set(g)) for g in rgroups)

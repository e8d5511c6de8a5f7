"""torch.nn.utils.rnn's PackedSequence: a named tuple whose `data` field is the packed tensor.

A packed sequence carries what its tensor carries (a gradient, its graph, its hazards); the value
is marked Mark.PACKED so that reading `.data` gives that tensor back with its graph
(interp/calls.get_attr), where `.data` of a tensor is a cut. A recurrent module given one returns
one (modules.module_call).
"""

from __future__ import annotations

from ..interp.core import Core
from ..interp.values import EMPTY, Kind, Mark, V, join_all, make_tuple


def _first(args, kwargs, *names):
    if args:
        return args[0]
    return next((kwargs[n] for n in names if n in kwargs), None)


def pack(ip: Core, qual, args, kwargs, node, env) -> V | None:
    """`pack_padded_sequence(x, lengths)`, `pack_sequence([a, b])`, `PackedSequence(data, sizes)`."""
    x = _first(args, kwargs, "input", "sequences", "data")
    if not isinstance(x, V):
        return None
    if x.items is not None and not x.k & Kind.TENSOR:
        # a list of sequences: their values joined, packed into one tensor
        x = join_all([v for v in x.items if isinstance(v, V)] or [x])
    return x.replace(k=x.k | Kind.TENSOR, items=None, marks=x.marks | Mark.PACKED, site=node)


def unpack(ip: Core, qual, args, kwargs, node, env) -> V | None:
    """`pad_packed_sequence(packed)`: (the padded tensor, the lengths)."""
    x = _first(args, kwargs, "sequence")
    if not isinstance(x, V):
        return None
    padded = x.replace(marks=x.marks & ~Mark.PACKED, site=node)
    return make_tuple([padded, V(Kind.TENSOR, EMPTY, site=node)], node)

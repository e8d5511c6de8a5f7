"""Binary operators on abstract values: constants folded, lists and tuples concatenated, numbers
and unknowns combined; an operand that is a tensor makes it a tensor op (ip.sem.tensors.binop)."""

from __future__ import annotations

import ast
import re

from .core import Core
from .objects import ListObj, PIter, Site, Unit, is_closed
from .values import EMPTY, NOCONST, Kind, Mark, V, const, flow_of, join_all, make_tuple

_FOLD_MAX = 100_000  # a constant longer than this is not built (`"a" * 10**10` would take 10 GB)


# arithmetic whose result of a tensor with a graph has a graph too (not `//`, comparisons, bit ops)
_GRAPH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.MatMult)


def binop(ip: Core, op, left: V, right: V, node) -> V:
    if isinstance(op, ast.Add) and _sequence_and_unknown(left, right):
        # `feats += feat` of an unseen call's result and a list: a tensor plus a list raises, so
        # the unknown side is a sequence too and the result a list, not a tensor (a later
        # `feats[i] = conv(feats[i])` is no in-place write)
        return _concatenated(ip, left, right, node)
    if left.k & Kind.TENSOR or right.k & Kind.TENSOR:
        out = ip.sem.tensors.binop(ip, op, left, right, node)
        if (left.marks | right.marks) & Mark.GRAPH and isinstance(op, _GRAPH_OPS) and out.k & Kind.TENSOR:
            # `self.sum += val * n` of a loss backward() ran on: what it makes has that graph too
            out = out.replace(marks=out.marks | Mark.GRAPH)
        return out
    lc, rc = left.const, right.const
    if lc is not NOCONST and rc is not NOCONST:
        try:
            return const(_BINOPS[type(op)](lc, rc), node)
        except Exception:
            pass
    if isinstance(op, ast.Mod) and type(rc) is int and rc in (1, -1) and left.k == Kind.NUMBER and lc is NOCONST:
        # a count modulo 1 (`(step + 1) % accumulation_steps` with accumulation_steps = 1): every
        # integer is a multiple of 1, so the update runs at each iteration
        return const(0, node)
    exact = _exact_sequence(ip, op, left, right, node)
    if exact is not None:
        return exact
    if isinstance(op, (ast.Sub, ast.BitAnd, ast.BitOr)) and left.k & Kind.LIST and right.k & Kind.LIST:
        made = _param_set_op(ip, op, left, right, node)
        if made is not None:
            return made
    if left.k & (Kind.LIST | Kind.TUPLE) and isinstance(op, ast.Add):
        return _concatenated(ip, left, right, node)
    f = flow_of(left, right)
    k = (
        Kind.ARRAY
        if (left.k & Kind.ARRAY or right.k & Kind.ARRAY)
        else (
            Kind.STR
            if left.k == Kind.STR
            else Kind.NUMBER
            # a number and a value of unknown kind (an argument: `self._loss_scaling * loss`) make
            # a value of unknown kind, which may be a tensor
            if (left.k & Kind.NUMBER or right.k & Kind.NUMBER) and not (left.k | right.k) & Kind.UNKNOWN
            else Kind.UNKNOWN
        )
    )
    out = V(k, EMPTY, f.org, f.weak, f.top, f.cuts, f.saves, f.grads, site=node, unk=f.unk, terms=f.terms)
    if k == Kind.UNKNOWN and isinstance(op, (ast.Add, ast.Sub, ast.Mult)) and (left.marks | right.marks) & Mark.LOGITS:
        # `rews2 - rews1` of two outputs of a network the engine does not see: still unbounded
        out = out.replace(marks=(left.marks | right.marks) & (Mark.LOGITS | Mark.NET_OUT))
    # a loss of unknown kind (a library model's `outputs.loss`) divided by a count is scaled too
    return out.replace(marks=out.marks | Mark.SCALED) if scales(op, left, right) else out


def _sequence_and_unknown(left: V, right: V) -> bool:
    """One side is a list or a tuple and nothing else, the other of a kind not known."""
    return any(a.k in (Kind.LIST, Kind.TUPLE) and b.k & Kind.UNKNOWN for a, b in ((left, right), (right, left)))


def _concatenated(ip: Core, left: V, right: V, node) -> V:
    if left.items is not None and right.items is not None:
        return make_tuple(list(left.items) + list(right.items), node)
    lst = ListObj(None, Site(ip.st.sf, node))
    for side in (left, right):
        if side.items is not None:
            for it in side.items:
                lst.add(it)
        else:
            lst.add(ip.iter_value(side))
    return V(Kind.LIST, frozenset((lst,)), site=node)


def _elements(v: V) -> list | None:
    """The elements, in order, of a value that is exactly one list known element by element."""
    lists = v.of(ListObj)
    if v.k == Kind.LIST and len(lists) == 1 and v.objs == {lists[0]} and lists[0].exact and lists[0].elems is not None:
        return list(lists[0].elems)
    return None


def _exact_sequence(ip: Core, op, left: V, right: V, node) -> V | None:
    """`[a] * n` and `[a, b] + [c]` on lists known element by element: the new list, element by
    element (`h = [hidden] * (n - 1)`, then `zip([d_in] + h, h + [d_out])` builds an MLP's n layers)."""
    if not (left.k == Kind.LIST or right.k == Kind.LIST):
        return None  # the common case, numbers and unknowns: nothing to look at
    if isinstance(op, ast.Add):
        a, b = _elements(left), _elements(right)
        elems = a + b if a is not None and b is not None else None
    elif isinstance(op, ast.Mult):
        a, n = _elements(left), right.const
        if a is None:
            a, n = _elements(right), left.const
        ok = a is not None and isinstance(n, int) and not isinstance(n, bool) and 0 <= n * len(a) <= ListObj.MAX_ELEMS
        elems = a * max(n, 0) if ok and a is not None else None
        if elems is None and a is not None and n is NOCONST and (left.k | right.k) & Kind.NUMBER:
            # `[None] * (len(rollout) - 1)`: a list of a length not known, of those elements (filled
            # later with `lst[i] = ...`)
            lst = ListObj(join_all(a) if a else None, Site(ip.st.sf, node))
            lst.elems = None
            return V(Kind.LIST, frozenset((lst,)), site=node)
    else:
        return None
    if elems is None:
        return None
    lst = ListObj(None, Site(ip.st.sf, node))
    lst.extend(elems)
    lst.exact = lst.elems is not None
    return V(Kind.LIST, frozenset((lst,)), site=node)


def scales(op, left: V, right: V) -> bool:
    """`loss / n`, `loss * 0.25`: a loss scaled by a count or a constant factor (GA205)."""
    if isinstance(op, ast.Div):
        return left.carries and (not right.k & Kind.TENSOR or right.shape == ())
    if isinstance(op, ast.Mult):
        for a, b in ((left, right), (right, left)):
            c = b.const
            if a.carries and isinstance(c, (int, float)) and not isinstance(c, bool) and 0 < abs(c) < 1:
                return True
            if (
                a.carries
                and b.k & (Kind.NUMBER | Kind.UNKNOWN)
                and not b.k & Kind.TENSOR
                and not b.objs
                and not b.carries
                and c is NOCONST
            ):
                # `loss * bs`, `loss * scale`: a Python number the engine cannot see sets the loss's
                # scale (a sum over the nominal batch, a precomputed 1 / accum_steps, the ratio
                # `self.mini_batch_size / self.batch_size` of two settings it was not given)
                return True
    return False


def _fold_mult(a, b):
    seq, n = (a, b) if isinstance(a, (str, bytes, tuple, list)) else (b, a)
    if isinstance(seq, (str, bytes, tuple, list)) and isinstance(n, int) and n * len(seq) > _FOLD_MAX:
        raise OverflowError("not folded: too long")
    return a * b


def _fold_mod(a, b):
    if (isinstance(a, bytes) and re.search(rb"\d{5,}|\*", a)) or (isinstance(a, str) and re.search(r"\d{5,}|\*", a)):
        raise OverflowError("not folded: a format that may be huge")
    return a % b


_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: _fold_mult,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: _fold_mod,
    ast.Pow: lambda a, b: a**b if abs(b) < 64 else None,
}


def param_set(v: V) -> tuple[frozenset, bool] | None:
    """The parameter leaves a collection of them holds (`model.parameters()`, `set(...)` or a list
    of them), and whether they are known one by one (an unknown model's are not); None for
    anything else."""
    if not v.objs or v.items is not None:
        return None
    units: set = set()
    exact = True
    for o in v.objs:
        if isinstance(o, PIter):
            pis, found = [o], o.units
        elif isinstance(o, ListObj):
            c = o.content
            if c is None:
                continue
            if any(not isinstance(x, (PIter, Unit)) for x in c.objs) or c.k & Kind.UNKNOWN:
                return None
            pis = [x for x in c.objs if isinstance(x, PIter)]
            found = frozenset(x for x in c.objs if isinstance(x, Unit))
        else:
            return None
        if any(pi.named for pi in pis):
            return None
        exact = exact and all(pi.exact for pi in pis)
        units |= found
    if any(u.kind == Unit.OPAQUE and not is_closed(u) for u in units):
        exact = False
    return frozenset(units), exact


def _param_set_op(ip: Core, op, left: V, right: V, node) -> V | None:
    """`set(model.parameters()) - set(model.discr.parameters())` (and `&`, `|`): the parameters
    left, one by one when both sides are known so."""
    a, b = param_set(left), param_set(right)
    if a is None or b is None:
        return None
    if isinstance(op, ast.Sub):
        units = a[0] - b[0]
    elif isinstance(op, ast.BitAnd):
        units = a[0] & b[0]
    else:
        units = a[0] | b[0]
    site = Site(ip.st.sf, node)
    pi = PIter(frozenset(units), exact=a[1] and b[1], filtered=True, site=site)
    return V(Kind.LIST, frozenset((ListObj(units_value(pi), site),)), site=node)


def units_value(pi: PIter) -> V:
    """One element of a walk over parameters (`for p in model.parameters()`): any of them."""
    units = pi.units
    return V(
        Kind.TENSOR | Kind.PARAMS,
        frozenset(units) | {pi},
        org=frozenset(u for u in units if u.kind != Unit.OPAQUE),
        weak=frozenset(u for u in units if u.kind == Unit.OPAQUE),
    )

"""A call repeated at once on the other arm of a branch: one analysis stands for both.

Launchers are written `if world_size > 1: spawn(worker, args=(main, ...))` / `else: main(*args)`:
the engine runs both arms of a branch it cannot decide, so the same function ran twice with the
same arguments (detectron2's `main`, its whole training and evaluation). At run time only one of
the two calls happens, and the second analysis would repeat the first: the same function, the same
abstract arguments, in the same grad mode, autocast and loops, and nothing run in between (the
call is the first statement of its arm, the other call the last thing its arm ran). Then the first
call's result is the second's, and the records it made stand for both. A call whose analysis a
budget cut short is not reused.
"""

from __future__ import annotations

from .core import Interp
from .objects import FuncObj
from .values import V


def _vkey(v):
    """A value as a key of what the engine knows of it (not where it was made)."""
    if not isinstance(v, V):
        return ("obj", id(v))
    items = tuple(_vkey(i) for i in v.items) if isinstance(v.items, tuple) else v.items
    c = v.const
    return (v.k, v.objs, v.org, v.weak, v.top, v.cuts, v.saves, v.grads, items, type(c), c, v.unk, v.facts)


def _rest_key(v):
    return (v.terms, v.shape, v.marks, v.risks) if isinstance(v, V) else None


def _same(a, b) -> bool:
    try:
        return _vkey(a) == _vkey(b) and _rest_key(a) == _rest_key(b)
    except TypeError:  # a constant that cannot be compared (an array-like value)
        return False


def context(ip: Interp) -> tuple:
    st = ip.st
    loops = tuple(c[1] for c in st.ctx if c[0] == "loop")
    return (loops, id(st.nograd) if st.nograd is not None else None, st.grad_known, len(st.casts), st.shallow)


def _exclusive(a: tuple, b: list) -> bool:
    """Two branch paths that took different arms of one run of an `if` (its key is unique per run)."""
    arms = {k: arm for k, arm, _ in a}
    return any(k in arms and arms[k] != arm for k, arm, _ in b)


def reuse(ip: Interp, fn: FuncObj, args, kwargs, self_v) -> V | None:
    """The result of a call that ended just before this statement began (with the calls it ended
    inside of: a worker whose last statement was the call), when it is this call made on another
    arm of a branch."""
    ended = ip.st.last_calls
    if not ended or ip.st.ticks != ended[-1][6] + 1 or not ip.st.path:
        return None
    for last in ended:
        if last[0] is not fn:
            continue
        _, a0, k0, s0, ctx0, path0, _, result, events = last
        if ctx0 == context(ip) and _exclusive(path0, ip.st.path) and _same_args(a0, k0, s0, args, kwargs, self_v):
            # its lifecycle calls happened on both arms: those branches do not condition them
            arms = {k: arm for k, arm, _ in path0}
            keys = frozenset(k for k, arm, _ in ip.st.path if k in arms and arms[k] != arm)
            ip.st.trace.shared_arms.append((*events, keys))
            return result
    return None


def _same_args(a0, k0, s0, args, kwargs, self_v) -> bool:
    if len(a0) != len(args) or set(k0) != set(kwargs) or (s0 is None) != (self_v is None):
        return False
    if not all(_same(x, y) for x, y in zip(a0, args)) or not all(_same(k0[n], kwargs[n]) for n in k0):
        return False
    return self_v is None or _same(s0, self_v)


def ended(
    ip: Interp, fn: FuncObj, args, kwargs, self_v, ctx: tuple, path: tuple, cut: bool, result: V, first: int
) -> None:
    """A call ended: kept for the next statement, with the calls that ended with no statement run
    since; none when a budget cut part of it (nor the calls around it, which end later). `first`:
    the number of lifecycle events recorded when it began."""
    held = ip.st.last_calls
    if cut:
        held.clear()
        return
    if held and held[-1][6] != ip.st.ticks:
        held.clear()
    if len(held) < 8:
        held.append(
            (fn, list(args), dict(kwargs), self_v, ctx, path, ip.st.ticks, result, (first, len(ip.st.trace.events)))
        )


def gaps(ip: Interp) -> int:
    """How much the budgets have cut so far (it only grows)."""
    g = ip.st.gaps
    return len(g.cut_calls) + len(g.calls_cut) + len(g.loops_cut) + len(g.not_started) + g.stopped

"""Function summaries: a call that left nothing behind stands for the same call made again.

A call is followed afresh at every call site, so an evaluation routine run from the training loop
and again after it (detectron2's `do_test`, a metrics pass per epoch) costs its whole body each
time, and large training scripts ran out of budget in code that cannot hold a gradient defect. A
call's run is summarised by its result when it

- was given values that carry no gradient from a parameter the engine knows and hold no graph (the
  same objects, the same constants; an unknown that may carry anything is itself),
- recorded nothing in the trace (no event, loss, risk, write, crossing...),
- made no module, parameter leaf, optimizer, scheduler or scaler, and saved no graph node
  (objects.Made),
- stored no graph-carrying value into an object older than its iteration, met no budget,
- returned a value that carries no known parameter's gradient and holds no graph, down the
  containers and instances it returns (an unseen library's results, unknowns, may be in it),
- and cost at least MIN_STATEMENTS statements (a getter is re-run: it reads state that changes).

The same function called again on equal arguments, in the same grad mode, within the same root,
returns that result without running. What the first run stored into objects stays where it is,
as a second run would have stored it; the result is shared, as a memoised function's is.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from .objects import DictObj, InstanceObj, ListObj, Made
from .repeats import gaps
from .trace import Trace
from .values import V

MIN_STATEMENTS = 30  # a call cheaper than this is followed again (getters, small helpers)
MAX_ENTRIES = 4096  # summaries kept per run; beyond, calls are followed as before
_WALK = 200  # objects and values looked at to tell that a result carries no gradient

# what a call leaves in the trace (trace.Trace): every list and set but those that only describe the
# code (the functions run, the tests of branches and what they imply), which a summary may skip
_DESCRIPTIVE = {"ran", "branch_tests", "branch_literals", "implies"}
_RECORDS = tuple(sorted(k for k, v in vars(Trace()).items() if isinstance(v, (list, set)) and k not in _DESCRIPTIVE))
_sizes_of = attrgetter(*_RECORDS)


def key(ip: Any, fn: Any, args: Any, kwargs: dict, self_v: Any) -> tuple | None:
    """What must be equal for one call of `fn` to stand for another; None when this call's arguments
    carry gradient or cannot be compared (a starred argument)."""
    st = ip.st
    if ip.library is not None or st.shallow:
        return None
    parts: list = [id(fn), st.root_index, st.nograd is None, st.grad_known, len(st.accumulating), st.default_f64]
    for v in (self_v, *args):
        k = _value_key(v)
        if k is None:
            return None
        parts.append(k)
    for name in sorted(kwargs):
        k = _value_key(kwargs[name])
        if k is None:
            return None
        parts.append((name, k))
    return tuple(parts)


def _value_key(v: Any, depth: int = 0) -> Any:
    if v is None:
        return ()
    if not isinstance(v, V) or v.org or v.weak or v.saves or v.grads or v.terms or v.risks:
        return None
    items = None
    if v.items is not None:
        if depth > 2:
            return None
        items = tuple(_value_key(x, depth + 1) for x in v.items)
        if any(i is None for i in items):
            return None
    out = (v.k, v.objs, v.top, v.cuts, v.marks, v.facts, v.unk, v.shape, _const_key(v.const), items)
    try:
        hash(out)
    except TypeError:
        return None
    return out


def _const_key(c: Any) -> Any:
    # a constant's type too: 1 and 1.0 and True are equal, but a float divides where an int floors
    return (type(c), c)


def mark(ip: Any) -> tuple:
    """What a call's run may change and a summary must not skip: the trace's records, the stateful
    objects made, graph values stored into older objects, the budgets' gaps, the steps run."""
    st = ip.st
    sizes = tuple(map(len, _sizes_of(st.trace)))
    return (sizes, Made.stateful, st.graph_writes, st.trace.incomplete, gaps(ip)), st.steps


def keep(ip: Any, k: tuple, before: tuple, result: Any) -> None:
    """Keep `result` for `k` when the call that gave it left nothing behind (module docstring)."""
    st = ip.st
    state, steps = before
    if st.steps - steps < MIN_STATEMENTS or len(st.summaries) >= MAX_ENTRIES:
        return
    if mark(ip)[0] != state or not _inert(result):
        return
    st.summaries[k] = result


def _inert(result: Any) -> bool:
    """The value, and what it holds through containers and instances, carries no gradient."""
    seen: set = set()
    todo = [result]
    while todo:
        v = todo.pop()
        if v is None:
            continue
        if not isinstance(v, V):
            return False
        if v.org or v.weak or v.saves or v.grads or v.terms or v.risks:
            return False
        if v.items is not None:
            todo.extend(v.items)
        for o in v.objs:
            if id(o) in seen:
                continue
            seen.add(id(o))
            if len(seen) > _WALK:
                return False
            if isinstance(o, ListObj):
                todo.append(o.content)
            elif isinstance(o, DictObj):
                todo.extend(o.keys.values())
                todo.append(o.rest)
            elif isinstance(o, InstanceObj):
                todo.extend(o.attrs.values())
                if o.store is not None:
                    todo.extend(o.store.keys.values())
                    todo.append(o.store.rest)
    return True

"""Python lists and dicts as the interpreter replays their methods: what goes in, what comes out,
slices that keep the order nn.Sequential needs, and histories kept across iterations (GA303)."""

from __future__ import annotations

import ast

from . import recording
from .core import Core
from .loop_facts import attr_key as _attr_key
from .loop_facts import kept, reset_at
from .objects import DictObj, ListObj, Site
from .values import NONE, UNKNOWN, Kind, V, const, join_all, make_tuple

MAP_ITEMS = 16  # items of a tuple a map() runs its function on one by one, columns of rows unpacked


def columns(rows: V, width: int | None = None) -> list[V] | None:
    """The columns of rows that are lists or tuples of one known length (`[log_prob, value, ...]`
    appended per step), each the join of its rows' items; None when a row's length is not known or
    is not `width`.
    A None among the rows is a placeholder (`[None] * n`, filled later): zip() of it would raise."""
    found: list[list[V]] = []
    if rows.items is not None:
        found.append(list(rows.items))
    for o in rows.objs:
        if isinstance(o, ListObj) and o.exact and o.elems is not None:
            found.append(list(o.elems))
        else:
            return None
    if not found or rows.k & ~(Kind.TUPLE | Kind.LIST | Kind.NONE) or len({len(r) for r in found}) != 1:
        return None
    if not 0 < len(found[0]) <= MAP_ITEMS or (width is not None and len(found[0]) != width):
        return None
    return [join_all([r[i] for r in found]) for i in range(len(found[0]))]


def slice_list(ip: Core, o: ListObj, sl, node, env) -> V:
    """A slice of a list: its elements in order when the list and the bounds are known (what
    `nn.Sequential(*layers[:-1])` needs), else a list of the same content."""
    out = ListObj(None, Site(ip.st.sf, node))
    bounds = [ip.eval(p, env).const if p is not None else None for p in (sl.lower, sl.upper, sl.step)]
    if o.elems is not None and all(b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
        for e in o.elems[slice(*bounds)]:
            out.add(e)
        out.exact = o.exact and out.elems is not None
    elif o.content is not None:
        out.add(o.content)
        out.elems = None  # the order is not known
    return V(Kind.LIST, frozenset((out,)), site=node)


_IN_PLACE_ORDER = frozenset(("append", "index", "count", "copy", "__getitem__"))


def list_method(ip: Core, o: ListObj, name, args, kwargs, node) -> V:
    a0 = args[0] if args and isinstance(args[0], V) else None
    if name not in _IN_PLACE_ORDER:
        o.exact = False  # an insert, a pop, a sort...: `elems` no longer says which element is where
    if name in ("append", "add", "appendleft") and a0 is not None:
        loops = ip.st.stack[-1].loops
        recv = node.func.value if isinstance(node.func, ast.Attribute) else None
        key = _attr_key(recv) if recv is not None else ""
        loop = loops[-1]["node"] if loops and key else None
        if recording.outlives_iteration(ip, o) and (loop is None or kept(loop, key)):
            # `history.append(loss)` (emptied only now and then: kept between two resets)
            reset = reset_at(loop, key) if loop is not None else None
            a0 = recording.note_accumulation(ip, a0, ip.st.cur_stmt, outlives=recording.outlived(ip, (o,)), reset=reset)
            recording.note_graph_write(ip, o, a0)
        o.add(ip.sem.store(ip, a0) if ip.st.casts else a0)  # stored like an assignment
        return NONE
    if name == "insert" and len(args) > 1:
        o.add(ip.sem.store(ip, args[1]) if ip.st.casts and isinstance(args[1], V) else args[1])
        return NONE
    if name in ("extend", "update") and a0 is not None:
        lists = a0.of(ListObj)
        if a0.items is not None:
            for e in a0.items:
                o.add(e)
        elif len(lists) == 1 and lists[0].elems is not None and not a0.objs - {lists[0]}:
            for e in list(lists[0].elems):
                o.add(e)  # `layers.extend(block(...))`: keep the order nn.Sequential needs
        else:
            o.add(ip.iter_value(a0))
        return NONE
    if name in ("pop", "copy", "__getitem__"):
        if name == "copy":
            return V(Kind.LIST, frozenset((ListObj(o.content, o.site),)))
        return o.content if o.content is not None else UNKNOWN
    if name in ("index", "count"):
        return V(Kind.NUMBER)
    if name == "clear":
        clear_list(ip, o)
    return NONE


def clear_list(ip: Core, o: ListObj):
    """`lst.clear()`, `del lst[:]`: what was put in before is gone (on every path only). Under a
    condition it may stay; the graph it holds is then not one a later backward() certainly reaches
    again (`if update_due: update(); buffer.clear()` empties it whenever it was backpropagated)."""
    if not ip.st.cond:
        o.content = None
        o.elems = []
    elif o.content is not None:
        ip.st.trace.maybe_cleared |= o.content.saves


def dict_method(ip: Core, o: DictObj, name, args, kwargs, node) -> V:
    a0 = args[0] if args and isinstance(args[0], V) else None
    if name == "items":
        vals = o.values()
        lst = ListObj(make_tuple([V(Kind.STR), join_all(vals)], None) if vals else None, Site(ip.st.sf, node))
        if o.rest is None and o.default is None and o.keys and len(o.keys) <= ListObj.MAX_ELEMS:
            # every key known: each pair on its own (`for k, v in losses.items() if "loss" in k`)
            lst.elems = [make_tuple([const(k), v], None) for k, v in o.keys.items()]
            lst.exact = True
        return V(Kind.LIST, frozenset((lst,)))
    if name == "values":
        vals = o.values()
        lst = ListObj(join_all(vals) if vals else None, Site(ip.st.sf, node))
        if o.rest is None and o.default is None and vals and len(vals) <= ListObj.MAX_ELEMS:
            # every key known: the values one by one (`sum(losses.values())` adds each term)
            lst.elems, lst.exact = list(vals), True
        return V(Kind.LIST, frozenset((lst,)))
    if name == "keys":
        return V(Kind.LIST, frozenset((ListObj(V(Kind.STR), None),)))
    if name in ("get", "pop", "setdefault"):
        key = a0.const if a0 is not None and isinstance(a0.const, (str, int)) else None
        v = o.get(key)
        if name == "setdefault" and len(args) > 1 and v is None:
            o.set(key, args[1])
            return args[1]
        if v is None:
            return args[1] if len(args) > 1 else NONE
        return v
    if name == "update" and a0 is not None:
        for x in a0.objs:
            if isinstance(x, DictObj):
                for k, v in x.keys.items():
                    o.set(k, v)
                if x.rest is not None:
                    o.set(None, x.rest)
        if not a0.objs or any(not isinstance(x, DictObj) for x in a0.objs):
            # `d.update([("QP relaxation", loss), ...])`, `d.update(zip(names, losses))`: pairs
            pair = ip.iter_value(a0)
            if pair.items is not None and len(pair.items) == 2:
                key = pair.items[0].const
                o.set(key if isinstance(key, (str, int)) and not isinstance(key, bool) else None, pair.items[1])
            elif pair.k & ~Kind.NONE:
                o.set(None, pair)
        for k, v in kwargs.items():
            if k != "**":
                o.set(k, v)
        return NONE
    if name == "copy":
        d = DictObj(o.site)
        d.keys, d.rest = dict(o.keys), o.rest
        return V(Kind.DICT, frozenset((d,)))
    return UNKNOWN

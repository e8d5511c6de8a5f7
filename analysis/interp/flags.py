"""Flags: names and attribute paths a running function tests but never assigns (`if use_amp:`,
`if self.use_amp:`), so every test of one in a call sees the same value.

Two uses: a test on a flag inside an arm of an earlier test on it is decided (Frame.assumed), and
an `if flag:` whose block tests the flag again later runs the rest of the block inside each arm
(`tail_split`), so what one arm computed meets only that arm's later code: `with autocast(): loss =
...` under `if self.use_amp:` reaches `scaler.scale(loss)` under the next `if self.use_amp:`, never
the plain `loss.backward()` of its else.

A flag compared with constants (`mode == "both"`, `mode in ("a", "b")`, `!=`, `not in`) is a flag
too: an arm assumes the values it allows or excludes (Frame.assumed under "=" + the path), so
`if mode in ("a", "b"): loss.backward()` and a later `if mode == "a": ... elif mode == "b": ...
else: <uses loss>` are never taken together. The true arm of `p and q` assumes both parts, the
false arm of `p or q` both negations; a test joined so is decided once its parts are.
"""

from __future__ import annotations

import ast

from .core import Interp
from .frames import trains
from .loop_facts import attr_key

# the rest of a block run once per arm when it holds at most this many statements (it costs twice)
TAIL_STATEMENTS = 80
# and at most this many flags deep (2 ** depth copies of the innermost rest)
TAIL_DEPTH = 2


def dotted(node) -> str | None:
    """`flag` -> "flag", `self.args.fp16` -> "self.args.fp16", anything else -> None."""
    key = attr_key(node)
    return None if "<" in key else key


def tested(test) -> tuple[str, bool] | None:
    """(path, polarity) of a test written as `x`, `self.x`, `not x`: a flag if the running
    function never assigns it (`flag` decides that, which costs a walk of the function)."""
    polarity = True
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, polarity = test.operand, not polarity
    path = dotted(test)
    return None if path is None else (path, polarity)


_CONSTS = (str, int, float, bool, type(None))


def compared(test) -> tuple[str, frozenset, bool] | None:
    """(path, constants, polarity) of `x == c` (True), `x != c` (False), `x in (c, ...)`, `x not in
    (c, ...)` with `x` a name or attribute path and the constants literals; cached on the node."""
    found = test.__dict__.get("_ga_cmp", 0)
    if found != 0:
        return found
    found = None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and (path := dotted(test.left)) is not None:
        op, right = test.ops[0], test.comparators[0]
        values: list | None = None
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant):
            values = [right.value]
        elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            consts = [e for e in right.elts if isinstance(e, ast.Constant)]
            if len(consts) == len(right.elts):
                values = [e.value for e in consts]
        if values is not None and all(isinstance(v, _CONSTS) for v in values):
            found = (path, frozenset(values), isinstance(op, (ast.Eq, ast.In)))
    test._ga_cmp = found
    return found


def _allowed(known, values: frozenset, polarity: bool):
    """What an arm knows of a compared flag's value, (allowed values or None for any, excluded
    values), after also assuming `value in values` is `polarity`."""
    allowed, excluded = known if known is not None else (None, frozenset())
    if polarity:
        allowed = values if allowed is None else allowed & values
    else:
        excluded = excluded | values
    if allowed is not None:
        allowed, excluded = allowed - excluded, frozenset()
    return allowed, excluded


def _decided(known, values: frozenset) -> bool | None:
    """Whether `value in values` holds, from what an arm knows of the value."""
    allowed, excluded = known
    if allowed is not None:
        if allowed <= values:
            return True
        if not allowed & values:
            return False
    elif values <= excluded:
        return False
    return None


def flag(ip: Interp, test) -> tuple[str, bool] | None:
    """(path, polarity) of a test on a flag that keeps its value through the running function: a
    name it never assigns (a parameter, a closure or global variable), or an attribute path it never
    assigns (`self.use_amp`, set in `__init__`), `flag` or `not flag`."""
    t = tested(test)
    if t is None:
        c = compared(test)
        if c is None:
            return None
        t = (c[0], c[2])
    path = t[0]
    fn = ip.st.stack[-1].func
    if fn is None or isinstance(fn.node, ast.Lambda):
        return None
    head = path.split(".", 1)[0]
    if head in assigned(fn.node) and head not in _fixed_once(fn.node):
        return None
    if "." in path and path in _assigned_attrs(fn.node):
        return None
    # a call made in between could still set the attribute; a test made twice on one attribute is
    # taken to see one value, which can only drop what the other arm holds (never adds a finding)
    return t


def assumed(ip: Interp, test) -> bool | None:
    """The truth of `test` when it tests a flag an enclosing arm decided, else None."""
    frame = ip.st.stack[-1]
    if not frame.assumed:
        return None
    if isinstance(test, ast.BoolOp):
        # `a and b` is false once one part is, true once all are; `a or b` the other way round
        parts = [assumed(ip, p) for p in test.values]
        stop = isinstance(test.op, ast.Or)
        if stop in parts:
            return stop
        return (not stop) if all(p is (not stop) for p in parts) else None
    t = tested(test)
    if t is None:
        c = compared(test)
        known = frame.assumed.get("=" + c[0]) if c is not None else None
        if c is None or known is None or flag(ip, test) is None:
            return None
        inside = _decided(known, c[1])
        return None if inside is None else inside == c[2]
    if t[0] not in frame.assumed or flag(ip, test) is None:
        return None
    return frame.assumed[t[0]] == t[1]


def assume(frame, test, arm: bool) -> tuple | None:
    """Record in `frame.assumed` what the `arm` of a flag-like `test` holds; returns what to give
    `restore` after the arm (None: nothing recorded)."""
    if isinstance(test, ast.BoolOp):
        # the true arm of `a and b` holds every part, the false arm of `a or b` every negation
        if isinstance(test.op, ast.And) != arm:
            return None
        return ("parts", [assume(frame, p, arm) for p in test.values])
    t = tested(test)
    if t is not None:
        key, value = t[0], t[1] if arm else not t[1]
    else:
        c = compared(test)
        if c is None:
            return None
        key = "=" + c[0]
        value = _allowed(frame.assumed.get(key), c[1], c[2] if arm else not c[2])
    saved = (key, frame.assumed.get(key), key in frame.assumed)
    frame.assumed[key] = value
    return saved


def restore(frame, saved: tuple | None) -> None:
    if saved is not None and saved[0] == "parts":
        for part in reversed(saved[1]):
            restore(frame, part)
        return
    if saved is not None:
        key, before, had = saved
        if had:
            frame.assumed[key] = before
        else:
            frame.assumed.pop(key, None)


def assigned(fn_node) -> frozenset:
    """The names a function's own body binds (not its parameters), cached on the node."""
    return _stores(fn_node)[0]


def _fixed_once(fn_node) -> frozenset:
    """Names the function binds once, by a plain assignment of its body's top level, from names it
    never assigns (`use_amp = scaler is not None`, `fp16 = args.precision == "16"`): fixed for the
    rest of the call, as a parameter is (LAVIS' `if use_amp:` tested twice in the loop). Cached."""
    found = getattr(fn_node, "_ga_fixed", None)
    if found is None:
        names, _ = _stores(fn_node)
        counts: dict[str, int] = {}
        for n in ast.walk(fn_node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                counts[n.id] = counts.get(n.id, 0) + 1
        fixed = set()
        for stmt in fn_node.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and counts.get(stmt.targets[0].id) == 1
                and not any(isinstance(r, ast.Name) and r.id in names for r in ast.walk(stmt.value))
                and not any(isinstance(r, (ast.Call, ast.Lambda, ast.NamedExpr)) for r in ast.walk(stmt.value))
            ):
                fixed.add(stmt.targets[0].id)
        found = fn_node._ga_fixed = frozenset(fixed)
    return found


def _assigned_attrs(fn_node) -> frozenset:
    """The attribute paths a function's own body assigns (`self.x = ...`, `self.x += ...`)."""
    return _stores(fn_node)[1]


def _stores(fn_node) -> tuple[frozenset, frozenset]:
    """(names, attribute paths) a function's own body binds, found in one walk, cached on the node."""
    found = getattr(fn_node, "_ga_stores", None)
    if found is None:
        names: set[str] = set()
        paths: set[str] = set()
        for stmt in fn_node.body:
            for n in ast.walk(stmt):
                if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, (ast.Store, ast.Del)):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
                    elif (path := dotted(n)) is not None:
                        paths.add(path)
                elif isinstance(n, (ast.Nonlocal, ast.Global)):
                    names.update(n.names)
        found = fn_node._ga_stores = (frozenset(names), frozenset(paths))
    return found


def _walked(stmt) -> tuple[int, frozenset]:
    """(statements in `stmt`, the paths its `if` / `while` / conditional expressions test), cached."""
    found = getattr(stmt, "_ga_tests", None)
    if found is None:
        size, paths = 0, set()
        for n in ast.walk(stmt):
            if isinstance(n, ast.stmt):
                size += 1
            if isinstance(n, (ast.If, ast.IfExp, ast.While)):
                paths.update(_paths(n.test))
        found = stmt._ga_tests = (size, frozenset(paths))
    return found


def _tests_again(rest: list, path: str) -> bool:
    """`rest`, at most TAIL_STATEMENTS statements, tests `path` again."""
    size, found = 0, False
    for stmt in rest:
        n, paths = _walked(stmt)
        size += n
        if size > TAIL_STATEMENTS:
            return False
        found = found or path in paths
    return found


def _paths(test) -> list[str]:
    """The flag-like paths a test tests: itself, or the parts of an `and` / `or`."""
    parts = test.values if isinstance(test, ast.BoolOp) else [test]
    out = []
    for p in parts:
        if (t := tested(p)) is not None:
            out.append(t[0])
        elif (c := compared(p)) is not None:
            out.append(c[0])
    return out


def _build_tail(stmt: ast.If, rest: list) -> ast.If | None:
    if not rest or not any(_tests_again(rest, path) for path in _paths(stmt.test)):
        return None
    return ast.copy_location(ast.If(test=stmt.test, body=[*stmt.body, *rest], orelse=[*stmt.orelse, *rest]), stmt)


def tail_split(ip: Interp, stmts: list, i: int) -> ast.If | None:
    """For `stmts[i]`, an `if flag:` whose following statements test the same flag again: the same
    `if` with the rest of the block appended to both arms (built once, cached on the statement),
    to run instead of the statement and the rest; None when not worth it or not a flag here."""
    stmt = stmts[i]
    frame = ip.st.stack[-1]
    if frame.func is None or len(frame.assumed) >= TAIL_DEPTH:
        return None
    # only in a function that trains (backward, step, zero_grad in its text): the copies cost
    # statements, and a model's forward called per layer would pay them at every call
    if not trains(ip.st.sf, frame.func.node):
        return None
    if "_ga_tail" not in stmt.__dict__:
        stmt._ga_tail = _build_tail(stmt, stmts[i + 1 :])
    tail = stmt._ga_tail
    if tail is None:
        return None
    parts = stmt.test.values if isinstance(stmt.test, ast.BoolOp) else [stmt.test]
    for part in parts:
        f = flag(ip, part)
        if f is not None and f[0] not in frame.assumed and "=" + f[0] not in frame.assumed:
            return tail
    return None

"""Settings: what the truth of one setting says about others.

A trainer sets `self.use_amp = True` only under `if args.fp16 and not args.deepspeed:` and
`self.deepspeed = engine` only under `if self.args.deepspeed:`. Then a call under `if self.use_amp:`
and one under `if self.deepspeed:` never run in the same run, even though they test different
settings. Two records make that visible to the rules:

- the literals of an undecided test (`a`, `not a`, `a and not b`, `a or b`): for each arm, the
  settings it holds true or false. A setting is an atom: an attribute of one object (`self.args.fp16`
  and `args.fp16` name the same one when `self.args is args`), or a name a call never rebinds;
- for each attribute atom, the literals under which a value that may be true was stored in it:
  the attribute is true only if one of those stores ran, so its truth implies what they all share.

The model (build.py) closes each event's literals under those implications; two events holding an
atom with opposite truth are exclusive. A store the engine did not see (an attribute set from
outside the run followed) would make an implication too strong: it can only hide a pairing, never
add one.
"""

from __future__ import annotations

import ast

from . import flags
from .core import Interp
from .expressions import truth
from .objects import InstanceObj, Site, SymObj
from .values import Kind, V

# a literal: (atom, truth); an atom: ("a", object id, attribute), ("u", call node id, attribute) or
# ("n", call serial, name)
Literal = tuple[tuple, bool]
NOTHING: tuple[frozenset, frozenset] = (frozenset(), frozenset())


def _shape(test) -> tuple[str, tuple[tuple[ast.expr, bool], ...]] | None:
    """("and" | "or", ((literal node, polarity), ...)) for a test made of flag-like literals, cached."""
    if hasattr(test, "_ga_lits"):
        return test._ga_lits
    if isinstance(test, ast.BoolOp):
        op = "and" if isinstance(test.op, ast.And) else "or"
        parts = test.values
    else:
        op, parts = "and", [test]
    lits: list[tuple[ast.expr, bool]] = []
    for p in parts:
        polarity = True
        while isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
            p, polarity = p.operand, not polarity
        if flags.dotted(p) is None:
            lits = []
            break
        lits.append((p, polarity))
    found = (op, tuple(lits)) if lits else None
    test._ga_lits = found
    return found


def literal_nodes(test) -> tuple[ast.expr, ...] | None:
    """The flag-like names and attributes a test is made of (`a and not self.b`), or None."""
    shape = _shape(test)
    return None if shape is None else tuple(n for n, _ in shape[1])


def _peek(ip: Interp, node, env) -> V | None:
    """The value of a name or attribute path as it is now, read without running anything (no
    property, no `__getattr__`): None when that cannot be done."""
    if isinstance(node, ast.Name):
        v = env.get(node.id)
        if v is None:
            for scope_env in ip.st.stack[-1].closure:
                v = scope_env.get(node.id)
                if v is not None:
                    break
        return None if v is None or v.k & Kind.LAZY else v
    if isinstance(node, ast.Attribute):
        base = _peek(ip, node.value, env)
        o = _single(base)
        return None if o is None else o.attrs.get(node.attr)
    return None


def _single(v: V | None):
    if v is None or len(v.objs) != 1:
        return None
    o = next(iter(v.objs))
    return o if isinstance(o, (InstanceObj, SymObj)) else None


def _atom(ip: Interp, node, env) -> tuple | None:
    if isinstance(node, ast.Name):
        # a name the running call never rebinds keeps one value for the whole call
        if flags.flag(ip, node) is None:
            return None
        return ("n", ip.st.stack[-1].serial, node.id)
    base = _peek(ip, node.value, env)
    o = _single(base)
    if o is not None:
        return ("a", o.oid, node.attr)
    site = getattr(base, "unk", None) if base is not None and not base.objs else None
    if isinstance(site, Site):
        # the result of a call the engine does not follow (`args = parser.parse_args()`): one
        # object per call site, whichever name or attribute holds it now (`args`, `self.args`)
        return ("u", id(site.node), node.attr)
    return None


def test_literals(ip: Interp, test, env) -> tuple[frozenset, frozenset]:
    """(literals the true arm holds, literals the false arm holds) of an undecided test."""
    shape = _shape(test)
    if shape is None:
        return NOTHING
    op, lits = shape
    atoms = []
    for node, polarity in lits:
        atom = _atom(ip, node, env)
        if atom is not None:
            atoms.append((atom, polarity))
    if not atoms:
        return NOTHING
    if op == "and":
        # the true arm holds every conjunct; the false arm only a lone literal's negation
        true = frozenset(atoms)
        false = frozenset({(atoms[0][0], not atoms[0][1])}) if len(lits) == 1 and len(atoms) == 1 else frozenset()
        return true, false
    # `a or b`: its false arm holds every negation
    false = frozenset((a, not p) for a, p in atoms) if len(atoms) == len(lits) else frozenset()
    return frozenset(), false


def note_test(ip: Interp, key: int, test, env) -> None:
    """Record the literals of the branch `key` (an undecided `if`)."""
    lits = test_literals(ip, test, env)
    if lits is not NOTHING:
        ip.st.trace.branch_literals[key] = lits


def held(table: dict, path) -> frozenset:
    """The literals a condition path ((branch key, arm, depth), ...) holds; arms other than an
    `if`'s two (a match case, one of several joined modules) hold none."""
    out: frozenset = frozenset()
    if table:
        for key, arm, _ in path:
            lits = table.get(key)
            if lits is not None and 0 <= arm < 2:
                out |= lits[arm]
    return out


def closed(implies: dict, lits: frozenset) -> frozenset:
    """`lits` with what the truth of each attribute in them implies, and so on."""
    out = set(lits)
    todo = [a for a, t in lits if t]
    seen: set = set()
    while todo:
        atom = todo.pop()
        if atom in seen:
            continue
        seen.add(atom)
        stores = implies.get(atom)
        if stores:
            implied = frozenset.intersection(*stores)
            out |= implied
            todo.extend(a for a, t in implied if t)
    return frozenset(out)


def note_store(ip: Interp, recv: V, attr: str, value: V, stmt, env) -> None:
    """`obj.attr = value`: when the value may be true, the attribute's truth implies the literals
    this store ran under, and those of the value itself when it is a test (`a and not b`) or
    `x if cond else None`."""
    o = _single(recv)
    if o is None or truth(value) is False:
        return
    lits = held(ip.st.trace.branch_literals, ip.st.path)
    rhs = getattr(stmt, "value", None)
    if rhs is not None and _shape(rhs) is not None:
        # `self.use_amp = args.fp16 and not args.deepspeed`: true only when the test is
        lits |= test_literals(ip, rhs, env or {})[0]
    elif isinstance(rhs, ast.IfExp):
        test = test_literals(ip, rhs.test, env or {})
        if _falsy(rhs.orelse):
            lits |= test[0]
        elif _falsy(rhs.body):
            lits |= test[1]
    ip.st.trace.implies.setdefault(("a", o.oid, attr), []).append(lits)


def _falsy(node) -> bool:
    return isinstance(node, ast.Constant) and not node.value

"""Expressions of the abstract interpreter: names, operators, literals, comprehensions, iteration.

One handler per expression node type (EXPRESSIONS); `Interpreter.eval` dispatches on it. Calls
live in calls.py, operators in operators.py; what tensors do is torch semantics (ip.sem).
"""

from __future__ import annotations

import ast

from . import flags
from . import results as R
from .core import Interp
from .objects import (
    DictObj,
    FuncObj,
    InstanceObj,
    ListObj,
    ModuleObj,
    PIter,
    Site,
    SymObj,
    TensorObj,
    Unit,
    in_order,
    is_closed,
    module_value,
    next_oid,
    storages,
)
from .operators import binop, param_set, units_value
from .values import NOCONST, NONE, UNKNOWN, Fact, Kind, Mark, Star, V, const, flow_of, join, join_all, make_tuple

STAR = "<import *>"  # env key: modules whose names `from m import *` brought in

_BUILTIN_NAMES = {
    "len",
    "range",
    "enumerate",
    "zip",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "sum",
    "min",
    "max",
    "abs",
    "round",
    "float",
    "int",
    "bool",
    "str",
    "print",
    "isinstance",
    "issubclass",
    "getattr",
    "setattr",
    "hasattr",
    "super",
    "iter",
    "next",
    "map",
    "filter",
    "sorted",
    "reversed",
    "any",
    "all",
    "type",
    "id",
    "repr",
    "format",
    "open",
    "callable",
    "vars",
    "divmod",
    "pow",
    "hash",
    "object",
    "property",
    "staticmethod",
    "classmethod",
    "NotImplementedError",
    "ValueError",
    "RuntimeError",
    "TypeError",
    "KeyError",
    "Exception",
    "AssertionError",
    "StopIteration",
    "delattr",
    "slice",
    "chr",
    "ord",
    "hex",
    "bin",
    "globals",
    "locals",
    "exit",
    "quit",
    "input",
    "__import__",
}
BUILTINS = {n: V(Kind.MODREF, const=f"builtins.{n}") for n in _BUILTIN_NAMES}
BUILTINS["__name__"] = const("__main__")
BUILTINS["True"] = const(True)
BUILTINS["False"] = const(False)
BUILTINS["None"] = NONE
BUILTINS["__file__"] = V(Kind.STR)


def _e_const(ip: Interp, node, env):
    v = getattr(node, "_gradaudit_v", None)  # values are never changed in place: one per literal
    if v is None:
        v = node._gradaudit_v = const(node.value, node)
    return v


def _e_name(ip: Interp, node, env):
    name = node.id
    v = env.get(name)
    if v is not None:
        if v.k & Kind.LAZY:
            v = env[name] = ip.force(v)
        return v
    frame = ip.st.stack[-1]
    for scope_env in frame.closure:
        v = scope_env.get(name)
        if v is not None:
            if v.k & Kind.LAZY:
                v = scope_env[name] = ip.force(v)
            return v
    v = ip.lookup_global(frame.scope.globals, name)
    if v is not None:
        return v
    v = BUILTINS.get(name)
    return v if v is not None else UNKNOWN


def _e_attr(ip: Interp, node, env):
    recv = ip.eval(node.value, env)
    return graph_read(ip, node, env, ip.get_attr(recv, node.attr, node, env))


def _e_call(ip: Interp, node, env):
    if ip.st.steps > ip.st.budget:
        ip.st.trace.incomplete = True
    func = node.func
    args, kwargs = eval_args(ip, node, env)
    if isinstance(func, ast.Attribute):
        recv = ip.eval(func.value, env)
        if recv.k & Kind.MODREF and isinstance(recv.const, str) and not recv.objs:
            return ip.call_qualified(f"{recv.const}.{func.attr}", args, kwargs, node, env)
        out = ip.call_method(recv, func.attr, args, kwargs, node, env)
        # a value whose graph the engine did not see built: no known parameter, or unseen ones (the
        # output of a model whose structure is unseen) with no tensor seen saved for backward
        if func.attr == "backward" and not node.args and not recv.saves and (not recv.org or recv.unk):
            _backpropagated(ip, func.value, env)
        elif (
            func.attr == "backward"
            and len(node.args) == 1
            and len(args) == 1
            and not isinstance(node.args[0], ast.Starred)
            and not recv.k & Kind.TENSOR
            and isinstance(args[0], V)
            and not args[0].saves
            and (not args[0].org or args[0].unk)
        ):
            _backpropagated(ip, node.args[0], env)  # `accelerator.backward(loss)`, `engine.backward(loss)`
        return out
    fv = ip.eval(func, env)
    return ip.call_value(fv, args, kwargs, node, env)


def _backpropagated(ip: Interp, target, env) -> None:
    """`loss.backward()` / `out["loss"].backward()` of a value the engine did not see being made:
    torch raises unless it is a tensor with a graph, so the name it was read from holds one from
    here on (a history appended to a list stays alive with it, GA303), and so does the part read
    again (`meter.update(out["loss"])`, see graph_read)."""
    part = target
    k, mark = Kind.TENSOR, Mark.GRAPH  # the name itself is the tensor, or it holds one
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target, k, mark = target.value, 0, Mark.HOLDS_GRAPH
    if env is not None and isinstance(target, ast.Name) and isinstance(v := env.get(target.id), V):
        # and it requires grad, whatever the engine made of it (an abstract forward it could not run)
        facts = v.facts & ~Fact.NOGRAD if mark == Mark.GRAPH else v.facts
        new = env[target.id] = v.replace(k=v.k | k, marks=v.marks | mark, facts=facts)
        if part is not target and _constant_path(part):
            reads = ip.st.stack[-1].graph_reads
            old = reads.get(target.id)
            paths = old[1] if old is not None and old[0] is v else frozenset()
            reads[target.id] = (new, paths | {ast.unparse(part)})


def _constant_path(node) -> bool:
    """`out["loss"]`, `outputs.loss`, `out["losses"][0]`: a name's part by constant keys only."""
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def graph_read(ip: Interp, node, env, out: V) -> V:
    """`out["loss"]` read after `out["loss"].backward()`, `out` not rebound since: a tensor with a
    graph, whatever the engine made of it."""
    reads = ip.st.stack[-1].graph_reads
    if not reads or env is None:
        return out
    root = node
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
    if not isinstance(root, ast.Name) or root.id not in reads:
        return out
    v, paths = reads[root.id]
    if env.get(root.id) is not v or not _constant_path(node) or ast.unparse(node) not in paths:
        return out
    return out.replace(k=out.k | Kind.TENSOR, marks=out.marks | Mark.GRAPH, facts=out.facts & ~Fact.NOGRAD)


def eval_args(ip: Interp, node, env):
    args = []
    for a in node.args:
        if isinstance(a, ast.Starred):
            v = ip.eval(a.value, env)
            if v.items is not None:
                args.extend(v.items)
            else:
                args.append(Star(v))
        else:
            args.append(ip.eval(a, env))
    kwargs = {}
    for kw in node.keywords:
        v = ip.eval(kw.value, env)
        if kw.arg is None:
            for o in v.of(DictObj):
                for k, kv in o.keys.items():
                    if isinstance(k, str):
                        kwargs[k] = kv
            kwargs.setdefault("**", v)
        else:
            kwargs[kw.arg] = v
    return args, kwargs


def _e_binop(ip: Interp, node, env):
    left = ip.eval(node.left, env)
    right = ip.eval(node.right, env)
    return binop(ip, node.op, left, right, node)


def _e_unary(ip: Interp, node, env):
    v = ip.eval(node.operand, env)
    if isinstance(node.op, ast.Not):
        t = truth(v)
        return const(not t) if t is not None else V(Kind.NUMBER)
    if v.const is not NOCONST and isinstance(v.const, (int, float)) and not isinstance(v.const, bool):
        if isinstance(node.op, ast.USub):
            return const(-v.const, node)
        return v
    if v.k & Kind.TENSOR and isinstance(node.op, ast.Invert):
        # `~mask`: a bool or integer tensor, no gradient; a causal mask stays one (it still keeps a
        # position in every row, now as the positions it fills)
        return R.nondiff(ip, flow_of(v), node, "~")
    if v.k & Kind.TENSOR:
        return ip.sem.tensors.negate(ip, v, node)
    return V(
        v.k & (Kind.NUMBER | Kind.ARRAY | Kind.UNKNOWN) or Kind.UNKNOWN,
        org=v.org,
        weak=v.weak,
        top=v.top,
        cuts=v.cuts,
        saves=v.saves,
        grads=v.grads,
        site=node,
    )


def _one_tensor(a: V, b: V) -> bool:
    mine = storages(a)
    return bool(mine) and set(mine) == set(storages(b))


def _e_boolop(ip: Interp, node, env):
    vals = [ip.eval(v, env) for v in node.values]
    truths = [truth(v) for v in vals]
    if isinstance(node.op, ast.And):
        for v, t in zip(vals, truths):
            if t is False:
                return v
        if all(t is True for t in truths):
            return vals[-1]
    else:
        for v, t in zip(vals, truths):
            if t is True:
                return v
        if all(t is False for t in truths):
            return vals[-1]
    out = join_all(vals)
    return out.replace(const=NOCONST)


def _e_compare(ip: Interp, node, env):
    left = ip.eval(node.left, env)
    rights = [ip.eval(c, env) for c in node.comparators]
    if len(node.ops) == 1:
        op, right = node.ops[0], rights[0]
        if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            same = _same_param(op, left, right)
            if same is not None:
                return const(same)
        if isinstance(op, (ast.Is, ast.IsNot)):
            t = _is_none(left) if _is_none_node(node.comparators[0]) else None
            if t is None:
                # `name is 'relu'` of a string from the code (MAML's layer configuration): CPython
                # interns such literals, so equal ones are the same object; different ones never are
                lc, rc = _const_of(left), _const_of(right)
                if isinstance(lc, (str, bool)) and type(lc) is type(rc):
                    t = lc == rc
            if t is not None:
                return const(t if isinstance(op, ast.Is) else not t)
            return V(Kind.NUMBER)
        lc, rc = _const_of(left), _const_of(right)
        if lc is not NOCONST and rc is not NOCONST:
            try:
                r = _COMPARE[type(op)](lc, rc)
                return const(bool(r))
            except Exception:
                return V(Kind.NUMBER)
    vals = [left] + rights
    if any(v.k & Kind.TENSOR for v in vals):
        out = R.nondiff(ip, flow_of(*vals), node, "comparison", compared=vals)
        if len(node.ops) == 1 and _length_mask(node.ops[0], left, rights[0]):
            # `positions < lengths` (a sequence mask): position 0 is kept in every row of a non-empty sequence
            out = out.replace(marks=out.marks | Mark.CAUSAL)
        elif len(node.ops) == 1 and _zero_test(node.ops[0], right):
            out = out.replace(marks=out.marks | Mark.ZMASK)  # `p == 0`, `p <= eps`: true where p is (near) 0
        elif len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)) and _one_tensor(left, right):
            out = out.replace(marks=out.marks | Mark.NAN_TEST)  # `x != x`: true where x is NaN
        return out
    f = flow_of(*vals)
    return V(Kind.NUMBER | (Kind.ARRAY if any(v.k & Kind.ARRAY for v in vals) else 0), cuts=f.cuts, site=node)


def _one_param(v: V) -> Unit | None:
    """The parameter leaf a value is, when it is exactly one the engine can name."""
    if not v.k & (Kind.PARAMS | Kind.TENSOR) or v.items is not None:
        return None
    units = [o for o in v.objs if isinstance(o, Unit)]
    if len(units) != 1 or units[0].kind == Unit.OPAQUE or any(not isinstance(o, (Unit, PIter)) for o in v.objs):
        return None
    return units[0]


def _same_param(op, left: V, right: V) -> bool | None:
    """`p is q` of two parameters the engine names, `p in params` of one and a collection of
    parameters known one by one (`[p for p in vae.parameters() if p not in discr_params]`)."""
    u = _one_param(left)
    if u is None:
        return None
    if isinstance(op, (ast.Is, ast.IsNot)):
        w = _one_param(right)
        return None if w is None else (u is w) == isinstance(op, ast.Is)
    held = param_set(right)
    if held is None or not held[1]:
        return None
    return (u in held[0]) == isinstance(op, ast.In)


def _const_of(v: V, depth: int = 0):
    """The Python value of a constant, or of a tuple of constants (`TRAIN = 0,` in an Enum makes its
    members tuples: `phase == Phase.TRAIN` is still decided); NOCONST when not known."""
    if v.const is not NOCONST:
        return v.const
    if v.items is not None and depth < 3 and v.k == Kind.TUPLE and len(v.items) <= 16:
        out = tuple(_const_of(i, depth + 1) if isinstance(i, V) else NOCONST for i in v.items)
        if all(c is not NOCONST for c in out):
            return out
    return NOCONST


def _zero_test(op, right: V) -> bool:
    c = right.const
    if not isinstance(c, (int, float)) or isinstance(c, bool):
        return False
    if isinstance(op, ast.Eq):
        return c == 0
    return isinstance(op, (ast.Lt, ast.LtE)) and 0 < c <= 1e-3


def _length_mask(op, left: V, right: V) -> bool:
    if isinstance(op, (ast.Lt, ast.LtE)):
        return bool(left.marks & Mark.RANGE) and not right.marks & Mark.RANGE
    if isinstance(op, (ast.Gt, ast.GtE)):
        return bool(right.marks & Mark.RANGE) and not left.marks & Mark.RANGE
    return False


def _e_ifexp(ip: Interp, node, env):
    t = truth(ip.eval(node.test, env))
    if t is None:
        t = flags.assumed(ip, node.test)
    if t is True:
        return ip.eval(node.body, env)
    if t is False:
        return ip.eval(node.orelse, env)
    body = ip.eval(node.body, narrowed(node.test, env, True) or env)
    return join(body, ip.eval(node.orelse, narrowed(node.test, env, False) or env))


# builtin types a value tested with isinstance() is then no tensor of (what it holds on that arm)
_PLAIN_TYPES = {"int": Kind.NUMBER, "float": Kind.NUMBER, "bool": Kind.NUMBER, "complex": Kind.NUMBER, "str": Kind.STR}


def narrowed(test, env: dict, arm: bool) -> dict | None:
    """A copy of `env` for the arm of `isinstance(x, float)` (or `not isinstance(...)`) on which `x`
    is a plain number or string, and for the arm of `torch.is_tensor(x)` (`isinstance(x,
    torch.Tensor)`) on which it is no tensor: `v if isinstance(v, float) else v.detach()` logs the
    tensors of a dict of mixed values detached, and the numbers as they are. None when the test
    says nothing."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, arm = test.operand, not arm
    if not (isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name)):
        return None
    name = test.args[0].id
    if name not in env:
        return None
    func = test.func
    types: list[ast.expr]
    if isinstance(func, ast.Attribute) and func.attr == "is_tensor" and len(test.args) == 1:
        types = [func]  # `torch.is_tensor(x)`: isinstance(x, torch.Tensor)
    elif isinstance(func, ast.Name) and func.id == "isinstance" and len(test.args) == 2:
        types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    else:
        return None
    if not arm:
        # where the test failed, `x` is none of the types: no tensor when it named only the tensor type
        if types and all(isinstance(t, ast.Attribute) and t.attr in ("Tensor", "is_tensor") for t in types):
            out = dict(env)
            out[name] = V(Kind.UNKNOWN)
            return out
        return None
    kinds = {_PLAIN_TYPES.get(t.id) if isinstance(t, ast.Name) else None for t in types}
    if None in kinds:
        return None
    out = dict(env)
    out[name] = V(Kind.STR if kinds == {Kind.STR} else Kind.NUMBER)
    return out


def _e_subscript(ip: Interp, node, env):
    if (
        isinstance(node.value, (ast.List, ast.Tuple))
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, int)
        and not any(isinstance(e, ast.Starred) for e in node.value.elts)
        and -len(node.value.elts) <= node.slice.value < len(node.value.elts)
    ):
        # a choice written as a literal (`UPDATE = ['Approach0', 'Approach1'][0]`): that element
        return ip.eval(node.value.elts[node.slice.value], env)
    recv = ip.eval(node.value, env)
    index = ip.eval(node.slice, env)
    out = ip.get_item(recv, index, node, env)
    if (
        len(out.objs) > 1
        and index.const is NOCONST
        and index.items is None
        and sum(type(o) is TensorObj for o in out.objs) > 1
        and (recv.of(DictObj) or recv.of(ListObj))
    ):
        out = out.replace(marks=out.marks | Mark.ONE_OF)  # `h[node_id]`: one node's state, not each
    return graph_read(ip, node, env, out)


def _e_tuple(ip: Interp, node, env):
    items = []
    for e in node.elts:
        if isinstance(e, ast.Starred):
            v = ip.eval(e.value, env)
            if v.items is not None:
                items.extend(v.items)
            else:
                return make_list(ip, node, env, kind=Kind.TUPLE)
        else:
            items.append(ip.eval(e, env))
    return make_tuple(items, node)


def _e_list(ip: Interp, node, env):
    return make_list(ip, node, env)


def make_list(ip: Interp, node, env, kind=Kind.LIST):
    lst = ListObj(None, Site(ip.st.sf, node))
    lst.extend(
        [iter_value(ip, ip.eval(e.value, env)) if isinstance(e, ast.Starred) else ip.eval(e, env) for e in node.elts]
    )
    lst.exact = lst.elems is not None and not any(isinstance(e, ast.Starred) for e in node.elts)
    return V(kind, frozenset((lst,)), site=node)


def _e_dict(ip: Interp, node, env):
    d = DictObj(Site(ip.st.sf, node))
    for k, v in zip(node.keys, node.values):
        if k is None:
            src = ip.eval(v, env)
            for o in src.of(DictObj):
                for kk, vv in o.keys.items():
                    d.set(kk, vv)
                if o.rest is not None:
                    d.set(None, o.rest)
            continue
        kv = ip.eval(k, env)
        vv = ip.eval(v, env)
        key = kv.const if kv.const is not NOCONST and isinstance(kv.const, (str, int)) else None
        d.set(key, vv)
    return V(Kind.DICT, frozenset((d,)), site=node)


def _e_set(ip: Interp, node, env):
    return make_list(ip, node, env)


def _e_comp(ip: Interp, node, env):
    return comprehension(ip, node, env)


def _e_lambda(ip: Interp, node, env):
    frame = ip.st.stack[-1]
    closure = (env,) + frame.closure
    fn = FuncObj(node, frame.scope, closure, "<lambda>")
    fn.defaults = (
        [ip.eval(d, env) for d in node.args.defaults],
        [ip.eval(d, env) if d is not None else None for d in node.args.kw_defaults],
    )
    return V(Kind.FUNC, frozenset((fn,)))


def _e_joined(ip: Interp, node, env):
    return V(Kind.STR, site=node)


def _e_named(ip: Interp, node, env):
    v = ip.eval(node.value, env)
    ip.assign(node.target, v, env, node)
    return v


def _e_starred(ip: Interp, node, env):
    return ip.eval(node.value, env)


def _e_await(ip: Interp, node, env):
    return ip.eval(node.value, env)


def _e_yield(ip: Interp, node, env):
    v = ip.eval(node.value, env) if node.value is not None else NONE
    ip.st.stack[-1].yields.append(v)
    return UNKNOWN


def _e_yieldfrom(ip: Interp, node, env):
    v = ip.eval(node.value, env)
    ip.st.stack[-1].yields.append(iter_value(ip, v))
    return UNKNOWN


def _e_slice(ip: Interp, node, env):
    for part in (node.lower, node.upper, node.step):
        if part is not None:
            ip.eval(part, env)
    return V(Kind.NUMBER, site=node)


# at most this many elements of a comprehension over a known sequence are made one by one
_UNROLL_COMP = 8


def _pure(node) -> bool:
    """An expression that reads names, attributes, constants and `len(...)` only: evaluating it to
    learn what it iterates over has no effect the generic path would then repeat."""
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _pure(node.value)
    if isinstance(node, ast.Subscript):
        return _pure(node.value) and _pure(node.slice)
    if isinstance(node, ast.Slice):
        return all(p is None or _pure(p) for p in (node.lower, node.upper, node.step))
    if isinstance(node, ast.BinOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_pure(e) and not isinstance(e, ast.Starred) for e in node.elts)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in _VIEWS:
            return not node.args and not node.keywords and _pure(node.func.value)  # `losses.items()`
        return (
            isinstance(node.func, ast.Name)
            and node.func.id in ("len", "range", "zip", "enumerate")
            and not node.keywords
            and all(_pure(a) for a in node.args)
        )
    return False


_VIEWS = ("items", "values", "keys")


def _pure_test(node) -> bool:
    """A filter of a comprehension that reads and compares only (`if "loss" in k`)."""
    if isinstance(node, ast.Compare):
        return _pure(node.left) and all(_pure(c) for c in node.comparators)
    if isinstance(node, ast.BoolOp):
        return all(_pure_test(v) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _pure_test(node.operand)
    return _pure(node)


def _exact_elements(ip: Interp, node, env) -> list | None:
    """The elements of what `node` iterates over, one by one in order, when they are known: a
    `range` of constant bounds, a tuple, a list built by a literal (or a slice of one), and `zip` /
    `enumerate` of those. None otherwise, or beyond _UNROLL_COMP elements."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if ip.eval(node.func, env) is not BUILTINS.get(name) or not node.args:
            return None
        if name == "range":
            bounds = [ip.eval(a, env).const for a in node.args]
            if len(bounds) > 3 or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
                return None
            r = range(*bounds)
            return [const(i) for i in r] if len(r) <= _UNROLL_COMP else None
        if name in ("zip", "enumerate"):
            if name == "enumerate" and len(node.args) != 1:
                return None
            found = [_exact_elements(ip, a, env) for a in node.args]
            seqs = [q for q in found if q is not None]
            if len(seqs) != len(found):
                return None
            if name == "enumerate":
                return [make_tuple([const(i), e], None) for i, e in enumerate(seqs[0])]
            n = min(len(q) for q in seqs)
            return [make_tuple([q[i] for q in seqs], None) for i in range(n)]
        if name != "len":
            return None
    v = ip.eval(node, env)
    items = v.items
    if items is None:
        lists = v.of(ListObj)
        if len(lists) != 1 or v.objs - {lists[0]} or not lists[0].exact or lists[0].elems is None:
            return None
        items = lists[0].elems
    return list(items) if len(items) <= _UNROLL_COMP else None


def known_sequence(ip: Interp, node, env) -> list | None:
    """The elements of `range(2)`, `enumerate(range(n))`, `zip(...)` of those, one by one in order,
    when `node` is such a call of constant bounds (at most _UNROLL_COMP elements) and evaluating it
    has no effect; else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and _pure(node)):
        return None
    return _exact_elements(ip, node, env)


def _target_used(node) -> bool:
    names = {n.id for n in ast.walk(node.generators[0].target) if isinstance(n, ast.Name)}
    parts = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)
    return any(isinstance(n, ast.Name) and n.id in names for p in parts for n in ast.walk(p))


def _exact_comprehension(ip: Interp, node, env) -> V | None:
    """`[nn.Linear(i, o) for i, o in zip(sizes[:-1], sizes[1:])]`: a comprehension over a known
    sequence whose elements differ by its variable makes each element on its own, in order, so a
    ModuleList of them knows which layer is where (joined, a forward's `if i < len(self.layers) - 1`
    could not tell the last layer). Elements that do not use the variable stay one joined element."""
    if not isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.DictComp)) or len(node.generators) != 1:
        return None
    if isinstance(node, ast.DictComp) and not _pure(node.key):
        return None
    gen = node.generators[0]
    if gen.is_async or not _pure(gen.iter) or not _target_used(node) or not all(_pure_test(c) for c in gen.ifs):
        return None
    elems = _exact_elements(ip, gen.iter, env)
    if elems is None:
        return None
    # the filters first, each decided for each element (`sum(v for k, v in losses.items() if "loss"
    # in k)`: which losses are summed); one undecided, and the generic path joins them all
    chosen = []
    for e in elems:
        e2 = dict(env)
        ip.assign(gen.target, e, e2, node)
        truths = [truth(ip.eval(c, e2)) for c in gen.ifs]
        if any(t is None for t in truths):
            return None
        if all(truths):
            chosen.append(e2)
    results: list[V] = []
    if isinstance(node, ast.DictComp):
        # `{name: value.mean() for name, value in losses.items()}`: each key known, each value its own
        keys = [ip.eval(node.key, e2).const for e2 in chosen]
        if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in keys):
            return None
        d = DictObj(Site(ip.st.sf, node))
        _under_condition(ip, lambda: results.extend(ip.eval(node.value, e2) for e2 in chosen))
        for k, v in zip(keys, results):
            d.set(k, v)
        return V(Kind.DICT, frozenset((d,)), site=node)

    def run():
        for e2 in chosen:
            results.append(ip.eval(node.elt, e2))

    _under_condition(ip, run)
    lst = ListObj(None, Site(ip.st.sf, node))
    lst.extend(results)
    lst.exact = lst.elems is not None
    return V(Kind.LIST, frozenset((lst,)), site=node)


def _under_condition(ip: Interp, body) -> None:
    """Run `body` as code that may not run (a comprehension's element: its sequence may be empty)."""
    ip.st.cond += 1
    ip.st.cond_starts.append(ip.seq())
    ip.st.cond_oids.append(next_oid())
    try:
        body()
    finally:
        ip.st.cond -= 1
        ip.st.cond_starts.pop()
        ip.st.cond_oids.pop()


def comprehension(ip: Interp, node, env) -> V:
    exact_v = _exact_comprehension(ip, node, env)
    if exact_v is not None:
        return exact_v
    cenv = dict(env)
    gens = node.generators
    results: list[V] = []
    keys: list[V] = []
    exact = [True]
    filtered = [False]
    walked: list = []  # the parameter sets filtered one by one: the result holds what passed, not them

    def run(i, e):
        if i == len(gens):
            if isinstance(node, ast.DictComp):
                keys.append(ip.eval(node.key, e))
                results.append(ip.eval(node.value, e))
            else:
                results.append(ip.eval(node.elt, e))
            return
        gen = gens[i]
        it = ip.eval(gen.iter, e)
        units = param_elements(it)
        if units and gen.ifs and len(units) <= 512:
            # filter parameters one by one: `[p for p in m.parameters() if p.requires_grad]`; known
            # one by one only if what it walks was (an unknown model's parameters are not, and
            # walking none of them is the generic path below, which keeps the walk's PIter)
            if not all(pi.exact for pi in it.of(PIter)):
                exact[0] = False
            walked.extend(it.of(PIter))
            for _u, uv in units:
                e2 = dict(e)
                ip.assign(gen.target, uv, e2, node)
                truths = [truth(ip.eval(c, e2)) for c in gen.ifs]
                if any(t is False for t in truths):
                    filtered[0] = True
                    continue
                if any(t is None for t in truths):
                    exact[0] = False
                if _mentions_requires_grad(gen.ifs):
                    filtered[0] = True
                run(i + 1, e2)
            return
        elem = iter_value(ip, it)
        e2 = dict(e)
        ip.assign(gen.target, elem, e2, node)
        # parameters the engine cannot name (an unknown model's) are not known to fail the test
        unnamed = any(not pi.exact and not pi.units for pi in it.of(PIter))
        for c in gen.ifs:
            if truth(ip.eval(c, e2)) is False and not unnamed:
                return
        if gen.ifs:
            exact[0] = False
        run(i + 1, e2)

    _under_condition(ip, lambda: run(0, cenv))
    site = Site(ip.st.sf, node)
    if isinstance(node, ast.DictComp):
        d = DictObj(site)
        for k, v in zip(keys, results):
            d.set(
                k.const
                if isinstance(k.const, (str, int)) and exact[0] is not None  # NOCONST is neither
                else None,
                v,
            )
        # keys from a loop are not all known: keep values under unknown keys
        d.keys = {}
        d.rest = join_all(results) if results else None
        return V(Kind.DICT, frozenset((d,)), site=node)
    content = join_all(results) if results else None
    units = [u for r in results for u in r.objs if isinstance(u, Unit)]
    if content is not None and units and all(any(isinstance(o, Unit) for o in r.objs) for r in results):
        sources = frozenset(s for r in results for o in r.objs if isinstance(o, PIter) for s in o.sources)
        pi = PIter(frozenset(units), exact=exact[0], sources=sources, filtered=filtered[0], site=site)
        if filtered[0] and walked:
            # `[p for p in vae.parameters() if p not in discr_params]`: what the test dropped is not in it
            gone = {o for r in results for o in r.objs if isinstance(o, PIter)}
            content = content.replace(objs=(content.objs - gone) | {pi})
        else:
            content = content.replace(objs=content.objs | {pi})
    lst = ListObj(content, site)
    return V(Kind.LIST, frozenset((lst,)), site=node)


def iter_value(ip: Interp, v: V) -> V:
    """The value of one element when iterating over `v`."""
    if v.items is not None:
        return join_all(v.items) if v.items else UNKNOWN
    out = None
    for o in in_order(v.objs):
        if isinstance(o, InstanceObj):
            o = o.items_for("__iter__")
        if isinstance(o, ListObj):
            out = join(out, o.content if o.content is not None else UNKNOWN)
        elif isinstance(o, DictObj):
            out = join(out, V(Kind.STR))
        elif isinstance(o, PIter):
            if o.named:
                out = join(out, make_tuple([V(Kind.STR), units_value(o)], None))
            else:
                out = join(out, units_value(o))
        elif isinstance(o, ModuleObj):
            kids = list(o.children.values())
            if kids:
                out = join(out, join_all([module_value(c) if isinstance(c, ModuleObj) else _unit_v(c) for c in kids]))
            else:
                out = join(out, UNKNOWN)
        elif isinstance(o, (TensorObj, Unit)):
            # rows of a tensor: one dimension less (a per-sample loss's rows are scalars)
            out = join(
                out,
                V(
                    Kind.TENSOR,
                    frozenset((o,)),
                    v.org,
                    v.weak,
                    v.top,
                    v.cuts,
                    v.saves,
                    unk=v.unk,
                    facts=v.facts & ~Fact.UNREDUCED,
                    terms=v.terms,
                    shape=v.shape[1:] if v.shape else None,
                    marks=v.marks,
                ),
            )
        elif isinstance(o, SymObj):
            out = join(out, UNKNOWN)
    if out is None:
        if v.k & Kind.TENSOR:
            return v.replace(
                items=None, const=NOCONST, facts=v.facts & ~Fact.UNREDUCED, shape=v.shape[1:] if v.shape else None
            )
        # the dimensions of a shape (`bs, c, h, w = x.shape`) are numbers
        number = v.k & Kind.NUMBER if not v.carries else 0
        return V(Kind.UNKNOWN | number, weak=v.weak | v.org, top=v.top, cuts=v.cuts)
    return out


def _unit_v(u: Unit) -> V:
    return V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)))


def param_elements(v: V):
    """(unit, value) pairs when `v` iterates over known parameters one by one."""
    pis = v.of(PIter)
    lists = v.of(ListObj)
    if not pis and lists:
        for lst in lists:
            if lst.content is None:
                continue
            pis.extend(lst.content.of(PIter))
            if any(not isinstance(o, (PIter, Unit)) for o in lst.content.objs):
                return None
    if not pis or v.items is not None:
        return None
    out = []
    for pi in pis:
        if pi.named or any(u.kind == Unit.OPAQUE and not is_closed(u) for u in pi.units):
            return None
        for u in sorted(pi.units, key=lambda x: x.oid):
            out.append((u, V(Kind.TENSOR | Kind.PARAMS, frozenset((u, pi)), org=frozenset((u,)))))
    return out


def _mentions_requires_grad(ifs) -> bool:
    for c in ifs:
        for n in ast.walk(c):
            if isinstance(n, ast.Attribute) and n.attr == "requires_grad":
                return True
    return False


def truth(v: V):
    c = v.const
    if c is NOCONST:
        if v.k == Kind.NONE:
            return False
        if v.objs and not (
            v.k
            & (
                Kind.NONE
                | Kind.NUMBER
                | Kind.STR
                | Kind.UNKNOWN
                | Kind.TENSOR
                | Kind.LIST
                | Kind.DICT
                | Kind.TUPLE
                | Kind.ARRAY
            )
        ):
            return True
        return None
    if v.k & Kind.MODREF and isinstance(c, str) and not c.startswith("builtins."):
        # a dotted name the engine could not resolve to an object (`status.interrupted` of a host
        # application's package): its truth is the object's, not the name's
        return None
    try:
        return bool(c)
    except Exception:
        return None


def _is_none(v: V):
    if v.k == Kind.NONE:
        return True
    if v.k & Kind.NONE or (v.k & Kind.UNKNOWN and not v.objs):
        return None
    if v.objs or v.k & (Kind.TENSOR | Kind.NUMBER | Kind.STR | Kind.MODULE):
        return False
    return None


def _is_none_node(n) -> bool:
    return isinstance(n, ast.Constant) and n.value is None


_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


EXPRESSIONS = {
    ast.Constant: _e_const,
    ast.Name: _e_name,
    ast.Attribute: _e_attr,
    ast.Call: _e_call,
    ast.BinOp: _e_binop,
    ast.UnaryOp: _e_unary,
    ast.BoolOp: _e_boolop,
    ast.Compare: _e_compare,
    ast.IfExp: _e_ifexp,
    ast.Subscript: _e_subscript,
    ast.Tuple: _e_tuple,
    ast.List: _e_list,
    ast.Dict: _e_dict,
    ast.Set: _e_set,
    ast.ListComp: _e_comp,
    ast.SetComp: _e_comp,
    ast.GeneratorExp: _e_comp,
    ast.DictComp: _e_comp,
    ast.Lambda: _e_lambda,
    ast.JoinedStr: _e_joined,
    ast.NamedExpr: _e_named,
    ast.Starred: _e_starred,
    ast.Await: _e_await,
    ast.Yield: _e_yield,
    ast.YieldFrom: _e_yieldfrom,
    ast.Slice: _e_slice,
}

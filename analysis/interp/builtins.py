"""Python's builtins and the few standard-library calls the interpreter follows (itertools.chain,
functools.partial, collections, math), as handlers of the call table."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ..ops import torch_api as T
from . import recording
from . import results as R
from .containers import MAP_ITEMS, columns
from .core import Interp
from .expressions import param_elements as _param_elements
from .objects import (
    DictObj,
    FuncObj,
    InstanceObj,
    LazyImport,
    ListObj,
    ModuleObj,
    PartialObj,
    PIter,
    Site,
    SuperObj,
    Unit,
    module_value,
    storages,
)
from .operators import binop
from .semantics import CallTable
from .trace import UnseenRec
from .values import EMPTY, NOCONST, NONE, UNKNOWN, Fact, Kind, Mark, Star, V, const, flow_of, join_all, make_tuple

# builtins folded when their arguments are constants
_FOLDED: dict[str, Callable[..., Any]] = {"abs": abs, "round": round, "pow": pow}


def import_module(ip: Interp, dotted: str, level: int, stmt) -> V:
    """The module `import a.b` (or `__import__("a.b")`) names: the project's, run when first used,
    or a library's, known by its dotted name."""
    path = ip.st.program.resolve(ip.st.sf, dotted, level)
    if path is None and ip.library is None:
        path = ip.st.program.resolve_fallback(ip.st.sf, dotted, level, stmt)
    if path is not None:
        return V(Kind.LAZY, frozenset((LazyImport(path, dotted, None),)))
    return V(Kind.MODREF, const=dotted)


def _imported(ip: Interp, args, kwargs, node, top: bool) -> V | None:
    """`__import__("torch.optim", fromlist=[name])`, `importlib.import_module("torch.optim")` of a
    name known as a constant: that module (litgpt picks its optimizer class this way). Without a
    fromlist, `__import__` gives the top package, as Python does."""
    a0 = args[0] if args and isinstance(args[0], V) else kwargs.get("name")
    if not isinstance(a0, V) or not isinstance(a0.const, str) or not a0.const or a0.const.startswith("."):
        return None
    dotted = a0.const
    if top:
        fromlist = kwargs.get("fromlist", args[3] if len(args) > 3 else None)
        if not isinstance(fromlist, V) or fromlist.const in (None, ()):
            dotted = dotted.split(".")[0]
    return import_module(ip, dotted, 0, node)


# kinds no Python call applies to (what `callable()` of them is False for)
_NOT_CALLABLE = Kind.TENSOR | Kind.ARRAY | Kind.NUMBER | Kind.STR | Kind.NONE | Kind.LIST | Kind.TUPLE | Kind.DICT


def builtin_call(ip: Interp, name, args, kwargs, node, env) -> V:
    a0 = args[0] if args and isinstance(args[0], V) else None
    if name == "__import__":
        return _imported(ip, args, kwargs, node, top=True) or ip.opaque_call(None, args, kwargs, node, record=None)
    if name in ("float", "int", "bool", "complex"):
        if a0 is not None and a0.k & Kind.TENSOR and a0.carries:
            return R.scalar_cut(ip, a0, node, f"{name}()", receiver=node.args[0] if node.args else None)
        if a0 is not None and a0.const is not NOCONST:
            try:
                return const({"float": float, "int": int, "bool": bool, "complex": complex}[name](a0.const), node)
            except Exception:
                pass
        return V(Kind.NUMBER, cuts=a0.cuts if a0 else EMPTY, site=node, marks=a0.marks & Mark.SAMPLED if a0 else 0)
    if name in ("len", "id", "hash", "ord", "callable", "isinstance", "issubclass", "hasattr"):
        if name == "isinstance" and a0 is not None and len(args) > 1:
            return isinstance_check(ip, a0, args[1])
        if name == "hasattr" and a0 is not None and len(args) > 1:
            # `if not hasattr(self, "proj")`: a module that built its head in __init__ has it from then
            # on; `hasattr(v, "bias")` of an nn.ReLU is False
            has = _has_attr(a0, args[1])
            if has is not None:
                return const(has)
        if name == "len" and a0 is not None and (layers := _layers(a0)) is not None:
            return const(len(layers), node)  # `range(23, len(self.vgg))`: a container module's layers are known
        if name == "callable" and a0 is not None and a0.k and not a0.k & ~_NOT_CALLABLE:
            # `d() if callable(d) else d` (lucidrains' `default`) given a tensor: the value itself,
            # not the unknown result of calling it
            return const(False)
        if name == "len" and a0 is not None and a0.marks & Mark.PICKED:
            return V(Kind.NUMBER, site=node, marks=Mark.ZERO)  # `len(torch.nonzero(x))`: may be 0
        return V(Kind.NUMBER, site=node)
    if name in ("str", "repr", "format", "chr", "hex", "bin"):
        return V(Kind.STR, site=node)
    if name == "print":
        return NONE
    if name in ("range",):
        return V(Kind.LIST, frozenset((ListObj(V(Kind.NUMBER), None),)), site=node)
    if name in ("list", "tuple", "set", "frozenset", "sorted", "reversed", "iter"):
        if a0 is None:
            return V(Kind.LIST, frozenset((ListObj(None, Site(ip.st.sf, node)),)), site=node)
        if a0.items is not None and name in ("tuple", "list", "reversed", "sorted"):
            if name == "tuple":
                return a0
            lst = ListObj(join_all(a0.items) if a0.items else None, Site(ip.st.sf, node))
            return V(Kind.LIST, frozenset((lst,)), site=node)
        layers = _layers(a0) if name in ("list", "tuple") else None
        if layers is not None:
            # `list(vgg.features)`: the layers in order (a ModuleList built from them runs them in turn)
            lst = ListObj(None, Site(ip.st.sf, node))
            for layer in layers:
                lst.add(layer)
            return V(Kind.TUPLE if name == "tuple" else Kind.LIST, frozenset((lst,)), site=node)
        content = ip.iter_value(a0)
        lst = ListObj(content, Site(ip.st.sf, node))
        if _many(a0):
            lst.elems = None  # several elements, joined
        k = Kind.TUPLE if name == "tuple" else Kind.LIST
        v = V(k, frozenset((lst,)), site=node)
        return v
    if name == "dict":
        d = DictObj(Site(ip.st.sf, node))
        for k, v in kwargs.items():
            if k != "**":
                d.set(k, v)
        if a0 is not None:
            for o in a0.objs:
                if isinstance(o, DictObj):
                    for kk, vv in o.keys.items():
                        d.set(kk, vv)
                    if o.rest is not None:
                        d.set(None, o.rest)
                elif isinstance(o, ListObj) and o.content is not None:
                    pair = o.content
                    d.set(None, pair.items[1] if pair.items and len(pair.items) == 2 else pair)
            if not a0.objs or any(not isinstance(o, (DictObj, ListObj)) for o in a0.objs):
                # any other iterable of pairs (`dict(model.named_parameters())`, a generator)
                pair = ip.iter_value(a0)
                d.set(None, pair.items[1] if pair.items and len(pair.items) == 2 else pair)
        return V(Kind.DICT, frozenset((d,)), site=node)
    if name in ("enumerate",):
        elem = ip.iter_value(a0) if a0 is not None else UNKNOWN
        lst = ListObj(make_tuple([V(Kind.NUMBER), elem], None), Site(ip.st.sf, node))
        return V(Kind.LIST, frozenset((lst,)), site=node)
    if name == "zip":
        if len(args) == 1 and isinstance(args[0], Star) and (cols := columns(ip.iter_value(args[0].value))):
            # `zip(*rollout)` of rows of a known length: the columns, one tuple each, in order
            site = Site(ip.st.sf, node)
            return make_tuple([V(Kind.TUPLE, frozenset((ListObj(c, site),)), site=node) for c in cols], node)
        elems = [ip.iter_value(a.value if isinstance(a, Star) else a) for a in args]
        lst = ListObj(make_tuple(elems, None), Site(ip.st.sf, node))
        if any(_many(a.value if isinstance(a, Star) else a) for a in args):
            lst.elems = None  # several elements, joined
        return V(Kind.LIST, frozenset((lst,)), site=node)
    if name == "map" and len(args) == 2 and isinstance(args[1], V) and args[1].items is not None and not args[1].objs:
        if len(args[1].items) <= MAP_ITEMS:
            # over a tuple known item by item (`map(f, zip(*rows))`): each result in its place, so
            # that `a, b = map(...)` binds each to its own
            return make_tuple([ip.call_value(args[0], [it], {}, node, env) for it in args[1].items], node)
    if name == "map" and len(args) >= 2:
        elems = [ip.iter_value(a) for a in args[1:] if isinstance(a, V)]
        r = ip.call_value(args[0], elems, {}, node, env)
        return V(Kind.LIST, frozenset((ListObj(r, Site(ip.st.sf, node)),)), site=node)
    if name == "filter" and len(args) >= 2:
        return filter_call(ip, args[0], args[1], node, env)
    if name == "next":
        if a0 is None:
            return UNKNOWN
        return ip.iter_value(a0)
    if name == "sum" and (terms := _exact_elements(a0)) is not None and len(args) <= 2:
        # `sum(losses.values())`, `sum([adv, l1])`: each element a term of its own, as `adv + l1`
        # keeps them (a term cut from the graph is then seen beside the ones that train)
        total = args[1] if len(args) > 1 and isinstance(args[1], V) else kwargs.get("start")
        for t in terms:
            total = (
                t
                if total is None or (total.const == 0 and not total.k & Kind.TENSOR)
                else binop(ip, ast.Add(), total, t, node)
            )
        return total if total is not None else const(0, node)
    if name in ("sum", "max", "min", "abs", "round", "pow", "divmod", "any", "all"):
        vals = []
        for a in args:
            if not isinstance(a, V):
                continue
            if (
                name in ("sum", "max", "min", "any", "all")
                and len(args) <= 2
                and a is a0
                and (a.objs or a.items is not None)
                and not (a.k & Kind.TENSOR and not a.objs - set(storages(a)))
            ):
                vals.append(ip.iter_value(a))
            else:
                vals.append(a)
        if name in ("any", "all"):
            return V(Kind.NUMBER, site=node)
        # `sum(mb["mask"].sum() for mb in batches)`: counts that can each be 0 add up to one that
        # can be 0 (all of them at once: a rank given only padding)
        counted = name == "sum" and len(vals) == 1 and vals[0] is not a0 and vals[0].marks & Mark.ZERO
        kept = (Mark.ZERO, vals[0].facts & Fact.NONNEG) if counted else (0, 0)
        if any(v.k & Kind.TENSOR for v in vals):
            # `abs(t)` is `t.abs()`: elementwise, of t's shape
            shape = vals[0].shape if name == "abs" and len(vals) == 1 else None
            out = R.tensor_result(
                ip, flow_of(*vals), node, op="abs" if name == "abs" else None, inputs=tuple(vals), shape=shape
            )
            return out.replace(marks=out.marks | kept[0], facts=out.facts | kept[1]) if counted else out
        f = flow_of(*vals)
        if counted:
            n = V(Kind.NUMBER, EMPTY, f.org, f.weak, f.top, f.cuts, f.saves, f.grads, site=node, unk=f.unk)
            return n.replace(marks=kept[0], facts=kept[1])
        consts = [v.const for v in vals]
        if vals and all(c is not NOCONST for c in consts) and name in ("abs", "round", "pow"):
            try:
                return const(_FOLDED[name](*consts), node)
            except Exception:
                pass
        return V(Kind.NUMBER, EMPTY, f.org, f.weak, f.top, f.cuts, f.saves, f.grads, site=node, unk=f.unk)
    if (
        name == "getattr"
        and len(args) >= 2
        and isinstance(args[0], V)
        and args[0].k & Kind.MODREF
        and args[0].const == "torch.optim"
        and isinstance(args[1], V)
        and not isinstance(args[1].const, str)
    ):
        # `getattr(torch.optim, args.optim)`: an optimizer class picked by a name from the configuration
        return V(Kind.MODREF, const=T.PICKED_OPTIMIZER, site=node)
    if name == "getattr" and len(args) >= 2 and isinstance(args[1], V) and isinstance(args[1].const, str):
        v = ip.get_attr(args[0], args[1].const, node, env)
        if len(args) > 2 and v is UNKNOWN:
            return args[2]
        return v
    if name == "setattr" and len(args) >= 3 and isinstance(args[1], V):
        if isinstance(args[1].const, str):
            tgt = ast.Attribute(value=node.args[0], attr=args[1].const, ctx=ast.Store())
            ast.copy_location(tgt, node)
            ip.set_attr(args[0], args[1].const, args[2], node, tgt, env)
        else:
            # a computed name: what it sets is registered, but which attribute it replaces is not known
            recording.note_unseen(ip, UnseenRec.DYNAMIC, node, args[:1] + args[2:3])
            owners = args[0].of(ModuleObj)
            if ip.library is not None and len(owners) > 1:
                # a library's model surgery (timm's `set_layer` over every layer of a pruned model)
                # writes into one of many modules: registered in each, every write adds a child to
                # all of them and the next lookup joins them all again (quadratic and more); the
                # summary's model is read from what its construction registered
                owners = []
            for o in owners:
                for x in args[2].objs:
                    if isinstance(x, (ModuleObj, Unit)):
                        o.register(f"<{len(o.children)}>", x)
        return NONE
    if name == "super":
        frame = ip.st.stack[-1]
        cls = frame.func.cls if frame.func is not None else None
        if cls is not None and frame.self_v is not None:
            return V(Kind.INST, frozenset((SuperObj(cls, frame.self_v),)))
        return UNKNOWN
    if name == "type":
        return UNKNOWN
    if name in ("vars", "globals", "locals"):
        return V(Kind.DICT, frozenset((DictObj(None),)))
    if name in ("exec", "eval", "compile"):
        # code built from a string: it may reach anything the program holds
        recording.note_unseen(ip, UnseenRec.EXEC, node, args, everything=name != "compile")
        return ip.opaque_call(None, args, kwargs, node, record=None)
    if name in ("getattr", "delattr"):
        return ip.opaque_call(None, args, kwargs, node, record=UnseenRec.DYNAMIC)
    # the other builtins (print, sorted, ...) read what they are given
    return ip.opaque_call(None, args, kwargs, node, record=None)


def _layers(v: V) -> list | None:
    """The children of the one container module `v` is, in order (ModuleList, Sequential)."""
    mods = v.of(ModuleObj)
    if len(mods) != 1 or v.objs - {mods[0]} or mods[0].unordered or mods[0].opaque_unit is not None:
        return None
    if mods[0].summary:
        return None  # layers a comprehension made: how many is not known
    kids = list(mods[0].children.values())
    if not kids or len(kids) > 64 or not all(isinstance(k, ModuleObj) for k in kids):
        return None
    return [module_value(k) for k in kids]


def _many(v) -> bool:
    """A container of several elements (their values joined)."""
    if not isinstance(v, V):
        return False
    if v.items is not None:
        return len(v.items) > 1
    return any(o.elems is None or len(o.elems) > 1 for o in v.of(ListObj))


def _has_attr(value: V, name: V) -> bool | None:
    """True when every object `value` may be certainly has the attribute `name` (set on it, or its
    class's); False when none has it (a torch module of a class that defines no such attribute);
    None when not known."""
    attr = name.const if isinstance(name, V) else None
    if not isinstance(attr, str) or not value.objs:
        return None
    answers: set[bool | None] = set()
    for o in value.objs:
        if isinstance(o, ModuleObj):
            found = attr in o.children or attr in o.attrs
            if not found and o.cls is not None:
                found = o.cls.lookup(attr) is not None or o.cls.lookup_attr(attr) is not None
            if not found and _lacks(o, attr):
                answers.add(False)
                continue
        elif isinstance(o, InstanceObj):
            found = attr in o.attrs or o.cls.lookup(attr) is not None or o.cls.lookup_attr(attr) is not None
        else:
            return None
        answers.add(True if found else None)
    return answers.pop() if len(answers) == 1 else None


def _lacks(m: ModuleObj, attr: str) -> bool:
    """A torch module, seen whole, of a class with no attribute `attr` (`weight`/`bias` of an
    activation, a container, a pooling layer, MultiheadAttention)."""
    if m.cls is not None or m.lib is not None or m.opaque or not m.qual or not m.qual.startswith("torch.nn."):
        return False
    return attr in T.NO_WEIGHT_ATTRS.get(m.qual.rsplit(".", 1)[-1], ())


# Python's own types that a value's kind decides, and the type each kind is (None: an int, a float or a bool)
_PY_TYPES: dict[str, type] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "list": list,
    "tuple": tuple,
    "dict": dict,
}
_KIND_TYPES = {
    Kind.STR: str,
    Kind.LIST: list,
    Kind.TUPLE: tuple,
    Kind.DICT: dict,
    Kind.NONE: type(None),
    Kind.NUMBER: None,
}


def _builtin_isinstance(value: V, cls: V) -> bool | None:
    """`isinstance(x, str)`, `isinstance(x, (int, float))` of a value whose kinds are all plain Python
    ones (a float passed as `fill_value` is not a str): True or False when every kind it may have
    agrees, None when unknown."""
    names = [c.const for c in (cls.items if cls.items is not None else (cls,)) if isinstance(c, V)]
    if not names or not all(isinstance(n, str) and n.startswith("builtins.") for n in names):
        return None
    types: tuple[type, ...] = tuple(_PY_TYPES.get(n.removeprefix("builtins."), object) for n in names)
    if object in types or value.unk or not value.k or value.k & ~sum(_KIND_TYPES):
        return None
    if value.const is not NOCONST and isinstance(value.const, (str, int, float, type(None))):
        return isinstance(value.const, types)
    answers: set[bool | None] = set()
    for kind, t in _KIND_TYPES.items():
        if value.k & kind:
            if t is None:  # a number: an int, a float or a bool
                numbers: tuple[type, ...] = (int, float, bool)
                hits = {issubclass(n, types) for n in numbers}
                answers.add(hits.pop() if len(hits) == 1 else None)
            elif isinstance(t, type):
                answers.add(issubclass(t, types))
    return answers.pop() if len(answers) == 1 else None


def isinstance_check(ip: Interp, value: V, cls: V) -> V:
    known = _builtin_isinstance(value, cls)
    if known is not None:
        return const(known)
    q = cls.const if isinstance(cls.const, str) else None
    if q and value.objs and all(isinstance(o, ModuleObj) for o in value.objs):
        short = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn."):
            if short == "Module":
                return const(True)
            hits = {o.qual == q for o in value.objs}
            if hits == {True}:
                return const(True)
            if hits == {False} and all(o.qual for o in value.objs):
                return const(False)
    if q == "torch.nn.Parameter" and value.k == Kind.NONE:
        return const(False)  # `isinstance(m.bias, nn.Parameter)` of a layer built with bias=False
    if (
        q == "torch.nn.Parameter"
        and value.objs
        and not value.unk
        and all(isinstance(o, Unit) and o.kind == Unit.PARAM for o in value.objs)
    ):
        return const(True)  # a module's registered parameter
    if q == "torch.Tensor" and value.marks & Mark.GRAPH:
        return const(True)  # backward() ran on it: only a tensor has one
    if q in ("torch.Tensor", "torch.nn.Parameter") and not value.unk:
        # a tuple of hidden states is not a tensor: `repackage_hidden` recursions follow the data
        if value.k & (Kind.TUPLE | Kind.LIST) and not value.k & Kind.TENSOR:
            return const(False)
        if value.k == Kind.TENSOR and q == "torch.Tensor":
            return const(True)
    return V(Kind.NUMBER, unk=False)


def filter_call(ip: Interp, fn: V, it: V, node, env) -> V:
    units = _param_elements(it)
    if units is not None:
        # what filter keeps is known one by one only if what it walks was (an unknown model's
        # `.parameters()` walks nothing the engine can name)
        keep, exact, filtered = [], all(pi.exact for pi in it.of(PIter)), False
        for u, uv in units:
            r = ip.call_value(fn, [uv], {}, node, env)
            t = r.const if isinstance(r.const, bool) else None
            if t is False:
                filtered = True
                continue
            if t is None:
                exact = False
            keep.append(u)
        filtered = filtered or _lambda_mentions(fn, "requires_grad")
        pi = PIter(
            frozenset(keep),
            exact=exact,
            filtered=filtered,
            sources=frozenset(s for o in it.objs if isinstance(o, PIter) for s in o.sources),
            site=Site(ip.st.sf, node),
        )
        return V(Kind.PARAMS, frozenset((pi,)), site=node)
    elem = ip.iter_value(it)
    ip.call_value(fn, [elem], {}, node, env)
    return V(Kind.LIST, frozenset((ListObj(elem, Site(ip.st.sf, node)),)), site=node)


def _lambda_mentions(fn: V, word) -> bool:
    for o in fn.objs:
        if isinstance(o, FuncObj):
            for n in ast.walk(o.node):
                if isinstance(n, ast.Attribute) and n.attr == word:
                    return True
    return False


# ---------------------------------------------------------------- the standard library's calls


def _builtins(ip: Interp, qual, args, kwargs, node, env):
    return builtin_call(ip, qual.rpartition(".")[2], args, kwargs, node, env)


def _chain(ip: Interp, qual, args, kwargs, node, env):
    lst = ListObj(None, Site(ip.st.sf, node))
    for a in args:
        lst.add(ip.iter_value(a.value if isinstance(a, Star) else a))
    return V(Kind.LIST, frozenset((lst,)), site=node)


def _chain_from_iterable(ip: Interp, qual, args, kwargs, node, env):
    inner = ip.iter_value(args[0]) if args else UNKNOWN
    lst = ListObj(ip.iter_value(inner), Site(ip.st.sf, node))
    return V(Kind.LIST, frozenset((lst,)), site=node)


def _partial(ip: Interp, qual, args, kwargs, node, env):
    if not args:
        return None
    if isinstance(args[0], V) and not any(isinstance(a, Star) for a in args) and "**" not in kwargs:
        return V(Kind.FUNC, frozenset((PartialObj(args[0], args[1:], kwargs),)), site=node)
    return args[0]


def _dict_like(ip: Interp, qual, args, kwargs, node, env):
    if not qual.endswith("defaultdict"):
        return builtin_call(ip, "dict", args, kwargs, node, env)
    made = builtin_call(ip, "dict", args[1:], kwargs, node, env)
    factory = args[0] if args and isinstance(args[0], V) and args[0] is not NONE else None
    if factory is not None:
        for d in made.of(DictObj):
            d.default = factory
    return made


def _deque(ip: Interp, qual, args, kwargs, node, env):
    """`collections.deque(maxlen=n)`: a list, as far as what it holds goes (a replay buffer)."""
    return builtin_call(ip, "list", args[:1], {}, node, env)


def _random_pick(ip: Interp, qual, args, kwargs, node, env):
    """`random.sample(buffer, k)`, `random.choices(seq)`: elements of what they pick from (a replay
    buffer's transitions); `random.choice(seq)`: one of them."""
    if not args or not isinstance(args[0], V):
        return None
    elem = ip.iter_value(args[0])
    if qual.endswith(".choice"):
        return elem
    return V(Kind.LIST, frozenset((ListObj(elem, Site(ip.st.sf, node)),)), site=node)


def _math(ip: Interp, qual, args, kwargs, node, env):
    short = qual.rpartition(".")[2]
    tensors = [a for a in args if isinstance(a, V) and a.k & Kind.TENSOR and a.carries]
    if tensors:
        return R.scalar_cut(ip, flow_of(*tensors).value(), node, f"math.{short}()")
    f = flow_of(*[a for a in args if isinstance(a, V)])
    return V(Kind.NUMBER, cuts=f.cuts, site=node)


def _exact_elements(v) -> list | None:
    """The elements of a list known one by one and in full (a literal, only appended to; a dict's
    values when every key is known), at most a few and all tensors; else None."""
    if not isinstance(v, V) or len(v.objs) != 1:
        return None
    (o,) = v.objs
    if not isinstance(o, ListObj) or not o.exact or not o.elems or len(o.elems) > _MAX_TERMS:
        return None
    if not all(isinstance(e, V) and e.k & Kind.TENSOR and not e.k & ~(Kind.TENSOR | Kind.UNKNOWN) for e in o.elems):
        return None
    return list(o.elems)


_MAX_TERMS = 16


def _import_module(ip: Interp, qual, args, kwargs, node, env):
    return _imported(ip, args, kwargs, node, top=False)


def _cast(ip: Interp, qual, args, kwargs, node, env):
    """`typing.cast(T, value)`: the value itself (a type checker's note, nothing at run time)."""
    value = args[1] if len(args) > 1 else kwargs.get("val")
    return value if isinstance(value, V) else UNKNOWN


def register(calls: CallTable) -> None:
    calls.names(("importlib.import_module",), _import_module)
    calls.names(("typing.cast", "typing_extensions.cast"), _cast)
    calls.heads(("builtins",), _builtins)
    calls.names(("itertools.chain",), _chain)
    calls.names(("itertools.chain.from_iterable",), _chain_from_iterable)
    calls.names(("functools.partial",), _partial)
    calls.names(("collections.OrderedDict", "collections.defaultdict"), _dict_like)
    calls.names(("collections.deque",), _deque)
    calls.names(("random.sample", "random.choices", "random.choice"), _random_pick)
    calls.heads(("math",), _math)

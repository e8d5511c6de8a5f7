"""nn.Module semantics: construction, registration of submodules and parameters, forward calls,
module methods, indexing containers, and copies.

Handlers of the semantics tables (torch/register.py) for `torch.nn.*` classes and for ModuleObj;
what a library or framework adds to modules (a library model's forward, Lightning's hooks, PEFT
adapters) comes in through `ip.sem.modules` (semantics.ModuleExtension).
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable

from ..interp import recording
from ..interp import results as R
from ..interp.core import Core
from ..interp.objects import (
    FROZEN,
    DictObj,
    ListObj,
    ModuleObj,
    PIter,
    Site,
    SymObj,
    TensorObj,
    Unit,
    freezable,
    is_closed,
    module_value,
    unit_value,
)
from ..interp.trace import Cut, EventKind, NonLeafRec, SaveRec, UnregRec
from ..interp.values import (
    EMPTY,
    NOCONST,
    NONE,
    UNKNOWN,
    Fact,
    Kind,
    Mark,
    Star,
    V,
    const,
    flow_of,
    join_all,
    make_tuple,
    passthrough,
    requires_grad,
    surely_requires_grad,
)
from ..ops import torch_api as T
from . import leaves, numeric_ops, tensors
from .tensors import loss_shape


def module_attr(ip: Core, m: ModuleObj, attr, node) -> V:
    child = m.children.get(attr)
    if child is not None:
        if isinstance(child, ModuleObj):
            if m.arms is not None and attr in m.arms:
                return join_all([module_value(c) for c in _candidates(m, attr)])
            return module_value(child)
        return unit_value(child, node)
    if attr in m.attrs:
        return m.attrs[attr]
    if m.cls is not None:
        v = ip.class_attr(m.cls, attr, module_value(m), node)
        if v is not UNKNOWN:
            return v
    if attr == "training":
        return const(m.training) if isinstance(m.training, bool) else V(Kind.NUMBER, unk=False)
    if attr == "_modules":
        # the registry of children itself (`for name, layer in vgg._modules.items(): x = layer(x)`,
        # `model._modules["fc"] = nn.Linear(...)`): its children in registration order
        d = DictObj(Site(ip.st.sf, node))
        for k, c in m.children.items():
            if isinstance(c, ModuleObj):
                d.keys[k] = module_value(c)
        d.modules_of = m
        return V(Kind.DICT, frozenset((d,)))
    if attr in ("module", "_orig_mod") and m.lib is None:
        # DDP(model).module, torch.compile(model)._orig_mod: the wrappers pass the model through,
        # whether a torch container or a class of the project (which defines no such attribute:
        # its own children and attributes were looked up above)
        return module_value(m)
    for ext in ip.sem.modules:
        if ext.attr is not None:
            v = ext.attr(ip, m, attr, node)
            if v is not None:
                return v
    if m.opaque and attr in ("weight", "bias") and m.opaque_unit is not None and is_closed(m.opaque_unit):
        # `v.weight` of a library model the engine cannot see into: one of its unseen parameters
        # (its param group then holds what the model's own `.parameters()` would, nothing else)
        return unit_value(m.opaque_unit, node)
    if m.opaque and attr in T.METADATA_ATTRIBUTES:
        # `m.weight.dtype` of a module the engine cannot see: a tensor's metadata, not a submodule
        return V(Kind.UNKNOWN)
    if (
        m.opaque
        and not attr.startswith("_")
        and attr not in T.MODULE_METHODS
        and attr not in T.MODULE_ATTRIBUTES
        and ip.library is None
    ):
        sub = ModuleObj(f"<{attr}>", m.site, m.seq, qual=None)
        sub.opaque = True
        sub.opaque_unit = Unit(Unit.OPAQUE, "<params>", m.site, m.seq, count=None)
        sub.opaque_unit.owner, sub.opaque_unit.attr = sub, "<params>"
        m.children[attr] = sub
        sub.parent, sub.key = m, attr
        return module_value(sub)
    if m.qual and attr in ("weight", "bias") and m.spec is not None:
        return NONE
    if attr in ("weight", "bias") and m.lib is not None and not m.opaque and m.opaque_unit is None:
        # a library module seen whole whose parameters do not include it: a buffer (torchvision's
        # FrozenBatchNorm2d) or None, never a parameter
        return V(Kind.UNKNOWN, facts=Fact.NOGRAD)
    return V(Kind.UNKNOWN)


def module_setattr(ip: Core, m: ModuleObj, attr, value: V, stmt, target):
    if ip.library is not None:
        ip.library.note_attr(ip.st, m, attr)
    mods = [o for o in value.objs if isinstance(o, ModuleObj)]
    params = [o for o in value.objs if isinstance(o, Unit) and o.kind == Unit.PARAM]
    if mods and not (value.k & (Kind.LIST | Kind.DICT | Kind.TUPLE)):
        prev = m.children.get(attr)
        if (
            isinstance(prev, ModuleObj)
            and prev not in mods
            and ip.library is None  # a library model's summary keeps one module per slot (models.py)
            and ip.st.cond_oids
            and m.oid < ip.st.cond_oids[-1]
        ):
            # stored under a condition begun after the module was made (`if config.model_type ==
            # "RWKV": self.attn = TimeMix(...) elif ...: self.attn = MHA(...)`): the module may hold
            # what it held before, or this; both stay candidates (`_candidates`)
            # but not one this very statement made on an earlier run (a method called under a
            # condition at each iteration: `self.gates = nn.ModuleList()`, then `self.gates.extend`
            # would extend every earlier run's list too, each growing with every call)
            made = {x.site.node for x in mods if x.site is not None}
            held = [c for c in _candidates(m, attr) if c.site is None or c.site.node not in made or c in mods]
            mods = held + [x for x in mods if x not in held]
            if m.arms is None:
                m.arms = set()
            m.arms.add(attr)
        register_all(ip, m, attr, mods)
        return
    if params and not (value.k & (Kind.LIST | Kind.DICT | Kind.TUPLE)):
        register_all(ip, m, attr, params)
        return
    if attr in m.children and value.k == Kind.NONE:
        m.children.pop(attr, None)
    if attr == "inplace" and m.spec in T.FREE_MODULES and m.spec != "Identity" and isinstance(value.const, bool):
        # `for m in self.modules(): if isinstance(m, nn.ReLU): m.inplace = True`: from now on
        # forward() runs the in-place functional (or, set False, no longer does)
        m.inplace = value.const
    frame = ip.st.stack[-1]
    if m.cls is not None and frame.self_v is not None and m in frame.self_v.objs and ip.st.nograd is None:
        # `self.a = nn.Parameter(t).squeeze()`: the module keeps the op's result, not the parameter (GA113);
        # certain when written straight in the method's body, not under a condition on its arguments
        # (which a class checked alone gets made up)
        for s in value.objs:
            if type(s) is TensorObj and s.nonleaf_of is not None and s.nonleaf_of.kind == Unit.PARAM:
                node = s.site.node if s.site is not None else None
                op = node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else ""
                straight = frame.func is not None and any(stmt is b for b in frame.func.node.body)
                # `.to(device)`, `.float()`: the parameter itself when nothing needs converting (on
                # the CPU, already float32), a copy otherwise
                use = "module-convert" if op in T.MAY_RETURN_SELF else "module" if straight else "module-maybe"
                ip.st.trace.nonleaf.append(NonLeafRec(s.site, Site(ip.st.sf, stmt), s.nonleaf_of, use, ip.st.ctx))
    # an optimizer or a plain value stored under a condition begun after the module was made: the
    # other arm keeps the old one (both are what the attribute may hold)
    m.attrs[attr] = recording.stored(ip, m, attr, m.attrs.get(attr), value)
    # plain containers and tensors that hide parameters from .parameters() (GA109): only what a
    # module class's own code stores on `self`, and only values that surely are such containers
    if m.cls is None or frame.self_v is None or m not in frame.self_v.objs:
        return
    if value.k & ~(Kind.LIST | Kind.DICT | Kind.TUPLE | Kind.TENSOR | Kind.PARAMS) or value.top:
        return
    leaves = [o for o in value.objs if isinstance(o, Unit) and o.kind == Unit.LEAF]
    containers = [o for o in value.objs if isinstance(o, (ListObj, DictObj))]
    kind = None
    if value.k & Kind.TUPLE and value.items is not None:
        kind = "tuple"
        lst = ListObj(join_all(value.items) if value.items else None, Site(ip.st.sf, stmt))
        containers = [lst]
    elif containers:
        kind = "dict" if isinstance(containers[0], DictObj) else "list"
    elif (
        leaves
        and not (value.k & ~(Kind.TENSOR | Kind.PARAMS))
        and not value.facts & Fact.NOGRAD
        and all(_made_in_class(m, u) and not _handed_in(ip, u) for u in leaves)
    ):
        # a tensor the class makes itself (a weight); one handed to it (`self.x = x`, the input an
        # explainer differentiates with respect to), or a detached copy of one (`self._input =
        # x.detach()`, kept for statistics), is the caller's data, not a hidden parameter
        kind = "tensor"
    if kind is None:
        return
    rec = UnregRec(
        Site(ip.st.sf, stmt),
        m,
        attr,
        kind,
        containers[0] if containers else None,
        fresh=True,
        value_node=getattr(stmt, "value", None),
    )
    if kind == "tensor":
        rec.units = leaves
        for u in leaves:
            if u.owner is None:
                u.owner, u.attr = m, attr
    m.unregs.append(rec)
    if not m.in_init:
        after_init(ip, m, only=rec)


def _handed_in(ip: Core, u: Unit) -> bool:
    """`u` came in as an argument of a call running now (the input of a forward, another file's)."""
    return any(u in f.arg_objs for f in ip.st.stack if f.arg_objs)


def _made_in_class(m: ModuleObj, u: Unit) -> bool:
    cls = m.cls.node if m.cls is not None else None
    node = u.site.node if u.site is not None else None
    if cls is None or node is None or not hasattr(node, "lineno") or u.site.mod is not m.cls.scope.sf:
        return True  # unknown: as before
    return cls.lineno <= node.lineno <= (cls.end_lineno or cls.lineno)


# candidates registered under one key at most: a value joined over a loop of every module
# (`for m in model.modules(): m.a = m.b`) would give each of n modules n children
_CANDIDATES = 16


def _candidates(m: ModuleObj, attr: str) -> list[ModuleObj]:
    """The modules registered under `attr` (`attr`, `attr<1>`, ...: see register_all)."""
    out = []
    for i in range(_CANDIDATES):
        c = m.children.get(attr if i == 0 else f"{attr}<{i}>")
        if not isinstance(c, ModuleObj):
            break
        out.append(c)
    return out


def register_all(ip: Core, m: ModuleObj, key, objs):
    """Register what a value may be under `key`: several candidates (a loop variable, a branch)
    each get a slot, since any of them may be the registered one (at most _CANDIDATES, those
    not held by another module first)."""
    objs = sorted(objs, key=lambda o: o.oid)
    if len(objs) > _CANDIDATES:
        objs = sorted(objs, key=lambda o: (getattr(o, "parent", None) not in (None, m), o.oid))[:_CANDIDATES]
    for i, x in enumerate(objs):
        if key is None:
            m.register(f"<{len(m.children)}>", x)
        else:
            m.register(key if i == 0 else f"{key}<{i}>", x)


def after_init(ip: Core, m: ModuleObj, only=None):
    """Settle GA109 candidates once __init__ is done: drop what is registered after all."""
    recs = [only] if only is not None else list(m.unregs)
    if not recs:
        return
    registered_mods = {x.oid for x in m.submodules()}
    registered_units = {u.oid for u in m.units()}
    for rec in recs:
        if rec.kind == "tensor":
            units = [u for u in rec.units if u.oid not in registered_units]
            fresh = all(u.seq > m.seq for u in units)
        else:
            content = []
            c = rec.container
            if c is not None:
                content = list(c.content_value())
            mods, units = [], []
            for v in content:
                for o in v.objs:
                    if isinstance(o, ModuleObj) and o.oid not in registered_mods:
                        mods.append(o)
                    elif isinstance(o, Unit) and o.kind in (Unit.PARAM, Unit.LEAF) and o.oid not in registered_units:
                        units.append(o)
            fresh = bool(mods or units) and all(x.seq > m.seq for x in mods + units)
            for mod in mods:
                if mod.parent is None:
                    mod.parent, mod.key = m, f"{rec.attr}[]"
                units.extend(u for u in mod.units() if u.oid not in registered_units)
        if not units:
            continue
        rec.units = units
        rec.fresh = fresh
        for u in units:
            if u.unreg is None:
                u.unreg = rec
        if rec not in ip.st.trace.unregs:
            ip.st.trace.unregs.append(rec)


def set_training(ip: Core, m: ModuleObj, mode):
    """`.train(mode)`/`.eval()`: the module and every registered submodule. Under a condition the
    state becomes unknown where the paths disagree (like freezing), except for a module made under
    that condition: no path has it without the call (`self.ref_net.train(False)` in the `__init__`
    of a network built only `if args.params == 'distill'`)."""
    start = ip.st.cond_oids[-1] if ip.st.cond_oids else None
    for sub in m.submodules():
        if ip.st.cond and sub.training != mode and (start is None or sub.oid < start):
            sub.training = None
        else:
            sub.training = mode


def make_module(ip: Core, short, qual, args, kwargs, node) -> V:
    site = Site(ip.st.sf, node)
    if short == "Buffer":  # nn.Buffer(t): a tensor registered as a buffer, not a module
        return V(Kind.TENSOR, frozenset((TensorObj(site),)), site=node)
    m = ModuleObj(f"<{short}>", site, ip.seq(), qual=qual)
    consts = [a.const if isinstance(a, V) else NOCONST for a in args]
    kw = {k: v.const for k, v in kwargs.items() if k != "**"}
    m.dims = _dims(short, consts, kw)
    created = []
    if short in T.PARAM_MODULES:
        m.spec = short
        created = _register_params(m, short, consts, kw, site)
        # (padding_idx is nn.Embedding's third argument)
        m.dense_rows = short in T.UNPADDED_EMBEDDINGS and len(args) < 3 and not ({"padding_idx", "**"} & set(kwargs))
    elif short in T.RECURRENT:
        m.spec = short
        rnn_names = T.recurrent_params([c if c is not NOCONST else None for c in consts], kw)
        if rnn_names is None:
            rnn_names = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
            m.opaque = True
        for n in rnn_names:
            u = Unit(Unit.PARAM, n, site, m.seq, count=1)
            m.register(n, u)
            created.append(u)
    elif short in T.FREE_MODULES:
        m.spec = short
        pos = T.FREE_MODULES[short]
        val = kw.get("inplace", consts[pos] if pos is not None and pos < len(consts) else False)
        m.inplace = val is True
        if "Dropout" in short and tensors.zero_rate(list(args[:1]), kwargs):
            m.spec, m.inplace = "Identity", False  # p=0: forward() gives back its input itself, unchanged
    elif short in T.CONTAINERS:
        m.spec = short
        if short == "Sequential":
            for a in args:
                v = a.value if isinstance(a, Star) else a
                items = [v]
                if isinstance(a, Star):
                    lists = v.of(ListObj)
                    if len(lists) == 1 and lists[0].elems is not None:
                        items = list(lists[0].elems)  # nn.Sequential(*layers), in order
                        m.summary |= not lists[0].exact
                    else:
                        items = [ip.iter_value(v)]
                    if len(args) == 1:
                        m.alternatives = _alternatives(v, lists)
                for item in items:
                    stand_in = ip.sem.unseen_module(ip, item) if not item.objs else None
                    if stand_in is not None:
                        item = module_value(stand_in)  # `nn.Sequential(Convolution(...))` of a library not installed
                    if not item.objs and item.k & Kind.UNKNOWN:
                        # an element the engine did not see being made (`block(...)` of an
                        # unknown class): it may be a module with parameters
                        m.opaque = True
                        if m.opaque_unit is None:
                            m.opaque_unit = Unit(Unit.OPAQUE, "<params>", site, m.seq, count=None)
                            m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
                            created.append(m.opaque_unit)
                    if sum(1 for o in item.objs if isinstance(o, ModuleObj)) > 1:
                        m.unordered = True  # candidates for one position: the order is not known
                    for o in item.objs:
                        if isinstance(o, ModuleObj):
                            m.register(str(len(m.children)), o)
                        elif isinstance(o, DictObj):
                            for k2, v2 in o.keys.items():
                                for x in v2.objs:
                                    if isinstance(x, ModuleObj):
                                        m.register(str(k2), x)
        else:
            src = args[0] if args else kwargs.get("modules", kwargs.get("parameters"))
            if isinstance(src, V):
                container_extend(ip, m, src)
    else:
        # a torch module the engine has no table for: it may own parameters
        m.opaque = True
        m.opaque_unit = Unit(Unit.OPAQUE, "<params>", site, m.seq, count=None)
        m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
        created.append(m.opaque_unit)
    leaves.note_new_units(ip, created, node)
    return module_value(m)


def _register_params(m: ModuleObj, short: str, consts: list, kw: dict, site) -> list:
    """The parameters a torch module of a table (`nn.Linear(4, 2, bias=False)`) registers."""
    names, flags = T.PARAM_MODULES[short]
    enabled = set(names)
    for flag, (pos, key, default) in flags.items():
        val = kw.get(key, consts[pos] if pos is not None and pos < len(consts) else default)
        if val is False:
            if flag == "bias":
                enabled -= {n for n in names if "bias" in n}
            else:
                enabled = set()
    created = []
    parts: dict[str, ModuleObj] = {}
    for n in names:
        if n in enabled:
            u = Unit(Unit.PARAM, n, site, m.seq, count=1)
            child, dot, key = n.partition(".")
            if dot:
                # a parameter of a linear child (MultiheadAttention's `out_proj`, a Linear
                # subclass): the child is a module of its own, as `named_modules()` yields it
                part = parts.get(child)
                if part is None:
                    part = parts[child] = ModuleObj("<Linear>", site, m.seq, qual="torch.nn.Linear")
                    part.spec = "Linear"
                    m.register(child, part)
                part.register(key, u)
            else:
                m.register(n, u)
            created.append(u)
    return created


def table_base(cls) -> str | None:
    """The torch module of the tables a project's subclass derives from, its other bases being
    nn.Module (`class Linear(nn.Linear)`, NoisyLinear): what `super().__init__(...)` registers, and
    what a call runs when the subclass has no forward of its own; None otherwise."""
    strings = [b for c in cls.mro() for b in c.bases if isinstance(b, str)]
    tables = [q for q in strings if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in T.PARAM_MODULES]
    if len(tables) != 1 or any(q not in (tables[0], "torch.nn.Module") for q in strings):
        return None
    if any(len(c.bases) < len(c.base_values) for c in cls.mro()):
        return None  # a base that is no class the engine knows (a value it could not follow)
    return tables[0].rsplit(".", 1)[-1]


def base_init(ip: Core, m: ModuleObj, args, kwargs, node) -> bool:
    """`super().__init__(in_features, out_features)` in a project's subclass of a torch module of a
    table (NoisyLinear(nn.Linear)): the base registers its parameters as the module itself would, and
    when it is the only base the engine could not read, nothing of the module is unknown any more.
    False when the base is not such a module."""
    cls = m.cls
    if cls is None:
        return False
    strings = [b for c in cls.mro() for b in c.bases if isinstance(b, str)]
    held = [q for q in strings if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in T.CONTAINERS]
    if (
        len(held) == 1
        and all(q in (held[0], "torch.nn.Module") for q in strings)
        and not any(len(c.bases) < len(c.base_values) for c in cls.mro())
    ):
        return _container_base_init(ip, m, held[0], args, kwargs, node)
    short = table_base(cls)
    if short is None:
        return False
    consts = [a.const if isinstance(a, V) else NOCONST for a in args]
    kw = {k: v.const for k, v in kwargs.items() if k != "**"}
    created = _register_params(m, short, consts, kw, Site(ip.st.sf, node))
    m.opaque, m.opaque_unit = False, None
    leaves.note_new_units(ip, created, node)
    return True


def _container_base_init(ip: Core, m: ModuleObj, qual: str, args, kwargs, node) -> bool:
    """`super().__init__(*layers)` in a subclass of nn.Sequential (ModuleList, ModuleDict): the base
    holds what it is given, read as `nn.Sequential(*layers)` would be, and nothing else; layers
    added later (`self.add_module(...)`) are seen where they are added. Before this, the base stood
    for unseen parameters, and no optimizer of such a model was known exactly."""
    made = next(iter(make_module(ip, qual.rsplit(".", 1)[-1], qual, args, kwargs, node).of(ModuleObj)), None)
    if made is None:
        return False
    for key, child in list(made.children.items()):
        if isinstance(child, ModuleObj):
            m.register(key if key not in m.children else str(len(m.children)), child)
    m.spec = made.spec
    m.unordered, m.alternatives, m.summary = made.unordered, made.alternatives, made.summary
    m.opaque, m.opaque_unit = made.opaque, None
    if made.opaque:
        # an element it was given that the engine did not see made: the base may hold parameters
        m.opaque_unit = Unit(Unit.OPAQUE, f"{m.label}.<params>", m.site, m.seq, count=None)
        m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
    return True


def explicit_base_init(ip: Core, qual, args, kwargs, node, env) -> V | None:
    """`nn.Linear.__init__(self, in_features, out_features)` written out in a subclass's __init__
    (LoRA's MergedLinear(nn.Linear, LoRALayer)): the same as `super().__init__(...)` (base_init)."""
    if not args or not isinstance(args[0], V):
        return None
    done = False
    for m in args[0].of(ModuleObj):
        if m.in_init and base_init(ip, m, args[1:], kwargs, node):
            done = True
    return NONE if done else None


def container_extend(ip: Core, m: ModuleObj, src: V):
    if src.items is not None:
        elems = list(src.items)
    else:
        elems = []
        for o in src.objs:
            if isinstance(o, ListObj) and o.elems is not None and len(src.objs) == 1:
                elems.extend(o.elems)  # nn.ModuleList(layers): each layer at its own position, in order
                m.summary |= not o.exact
            elif isinstance(o, ListObj) and o.content is not None:
                if sum(1 for x in o.content.objs if isinstance(x, ModuleObj)) > 1:
                    m.unordered = True  # layers joined into one value: their order is not known
                elems.append(o.content)
            elif isinstance(o, DictObj):
                for k, v in o.keys.items():
                    for x in v.objs:
                        if isinstance(x, (ModuleObj, Unit)):
                            m.register(str(k), x)
                if o.rest is not None:
                    elems.append(o.rest)
            elif isinstance(o, ModuleObj):
                elems.extend(
                    module_value(c) if isinstance(c, ModuleObj) else unit_value(c) for c in o.children.values()
                )
            elif isinstance(o, PIter):
                elems.append(V(Kind.TENSOR, frozenset(o.units)))
    for e in elems:
        container_add(ip, m, e)


def container_add(ip: Core, m: ModuleObj, e: V) -> None:
    """One element added to a container module; one the engine cannot see (a layer of a library it
    could not read) holds parameters it cannot name: the container's are then not known exactly,
    unless a ModuleList holds it (which takes only modules) and it was made by a call of a library
    that is not installed: a module of unseen parameters, as nn.Sequential's elements."""
    if not e.objs and m.spec in T.MODULE_CONTAINERS:
        stand_in = ip.sem.unseen_module(ip, e)
        if stand_in is not None:
            e = module_value(stand_in)
    for x in e.objs:
        if isinstance(x, (ModuleObj, Unit)) and not (isinstance(x, Unit) and x.kind == Unit.OPAQUE):
            m.register(str(len(m.children)), x)
    if any(isinstance(x, SymObj) for x in e.objs) or (e.k & Kind.UNKNOWN and not e.objs):
        m.opaque = True
        if m.opaque_unit is None:
            m.opaque_unit = Unit(Unit.OPAQUE, "<params>", m.site, m.seq, count=None)
            m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"


def make_parameter(ip: Core, args, kwargs, node) -> V:
    rg = args[1] if len(args) > 1 else kwargs.get("requires_grad")
    u = Unit(Unit.PARAM, "<param>", Site(ip.st.sf, node), ip.seq(), count=1)
    if rg is not None and rg.const is False:
        u.frozen = FROZEN
    leaves.note_new_units(ip, [u], node)
    cuts = _rewrapped(ip, args, kwargs, node)
    # kept on the leaf too: a module stores the parameter, not this value with its cuts
    u.source_cuts = frozenset(c for c in cuts if c.removed or c.removed_weak)
    if u.source_cuts and ip.st.shallow:
        ip.st.trace.rewrapped.append(u)  # for a unit run alone (interpreter.run_units)
    return V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)), cuts=cuts, site=node)


def _rewrapped(ip: Core, args, kwargs, node) -> frozenset:
    """`nn.Parameter(W)` of a value computed from parameters, outside any `__init__` (EvolveGCN's
    weight made by an LSTM at each forward): a new leaf without W's history, so what W was computed
    from gets no gradient through it (GA104). Copying another module's weights while building a
    model is initialisation, not a cut."""
    data = args[0] if args else kwargs.get("data")
    if not isinstance(data, V) or ip.st.init_stack or not data.carries or not data.k & Kind.TENSOR:
        return EMPTY
    if data.objs and all(isinstance(o, Unit) for o in data.objs):
        return EMPTY  # a parameter itself (`nn.Parameter(other.weight)`): shared, not computed
    f = flow_of(data)
    cut = R.make_cut(ip, Cut.REWRAP, f.value(), node, "nn.Parameter()", receiver=node.args[0] if node.args else None)
    return cut.cuts


def deepcopy(ip: Core, v: V, node) -> V:
    mods = v.of(ModuleObj)
    if not mods:
        return v
    out = []
    for m in mods:
        out.append(module_value(_clone(ip, m, node, {})))
    return join_all(out)


def _clone(ip: Core, m: ModuleObj, node, memo) -> ModuleObj:
    if m.oid in memo:
        return memo[m.oid]
    site = Site(ip.st.sf, node)
    c = ModuleObj(f"<copy of {m.label}>", site, ip.seq(), cls=m.cls, qual=m.qual)
    memo[m.oid] = c
    c.spec, c.inplace, c.opaque, c.copy_of = m.spec, m.inplace, m.opaque, m
    c.unordered, c.summary, c.dims = m.unordered, m.summary, m.dims
    # a copy of a library model is that library model (its forward runs on the copy's own parameters)
    c.lib, c.dense_rows = m.lib, m.dense_rows
    c.arms = set(m.arms) if m.arms is not None else None
    if m.opaque_unit is not None:
        c.opaque_unit = Unit(Unit.OPAQUE, "<params>", site, c.seq, count=None)
        c.opaque_unit.owner, c.opaque_unit.attr = c, "<params>"
    for k, child in m.children.items():
        if isinstance(child, ModuleObj):
            c.register(k, _clone(ip, child, node, memo))
        elif isinstance(child, Unit):
            u = Unit(child.kind, child.label, site, c.seq, count=child.count)
            u.frozen = child.frozen
            c.register(k, u)
    if m.alternatives is not None and all(x.oid in memo for chain in m.alternatives for p in chain for x in p):
        c.alternatives = tuple(tuple(tuple(memo[x.oid] for x in p) for p in chain) for chain in m.alternatives)
    c.attrs = dict(m.attrs)
    return c


def _alternatives(v: V, lists: list[ListObj]) -> tuple[tuple[tuple[ModuleObj, ...], ...], ...] | None:
    """The chains `nn.Sequential(*v)` may be, each a tuple of positions holding the modules that may
    sit there: one chain per list `v` may be (built on two arms of an `if`), a position with
    several modules for an element that is one of several (`get_activation(name)`). None when a
    list is not known element by element, or holds anything but modules."""
    if not lists or len(lists) != len(v.objs):
        return None
    chains = []
    for lst in lists:
        if lst.elems is None:
            return None
        chain = []
        for e in lst.elems:
            mods = tuple(sorted((o for o in e.objs if isinstance(o, ModuleObj)), key=lambda o: o.oid))
            if not mods or len(mods) != len(e.objs) or e.k & Kind.UNKNOWN:
                return None
            chain.append(mods)
        chains.append(tuple(chain))
    if all(len(p) == 1 for chain in chains for p in chain) and len(chains) == 1:
        return None  # one known order: the plain chain of children
    return tuple(chains)


# at most this many chains are run one by one for a Sequential whose positions hold alternatives
_CHAINS = 8


def _spelled_out(chain: tuple) -> list[tuple]:
    """The chains a chain with alternatives at some positions stands for, each with one module per
    position, when there are at most _CHAINS; else the chain itself (its positions joined)."""
    n = 1
    for candidates in chain:
        n *= len(candidates)
    if n == 1 or n > _CHAINS:
        return [chain]
    return [tuple((c,) for c in combo) for combo in itertools.product(*chain)]


def module_call(ip: Core, m: ModuleObj, args, kwargs, node, env) -> V:
    if not ip.st.module_depth:
        recording.note_crossing(ip, m, args, node)  # the outermost call: a model applied by training code
        leaves.note_model_inputs(args, node)
    else:
        recording.note_crossing(ip, m, args, node, inner=True)
    ip.st.module_depth += 1
    try:
        out = _module_call(ip, m, args, kwargs, node, env)
    finally:
        ip.st.module_depth -= 1
    for ext in ip.sem.modules:
        if ext.result is not None:
            out = ext.result(ip, m, out)
    if not ip.st.module_depth:
        out = _unscaled(out)
    return out


def _unscaled(v: V) -> V:
    """A model's outputs: the scales inside its forward (attention's `* head_dim ** -0.5`) are not
    a loss's scale over micro-batches (GA205)."""
    if not isinstance(v, V):
        return v
    items = tuple(_unscaled(i) for i in v.items) if v.items is not None else None
    if not v.marks & Mark.SCALED and (items is None or all(a is b for a, b in zip(items, v.items or ()))):
        return v
    return v.replace(marks=v.marks & ~Mark.SCALED, items=items)


def _module_call(ip: Core, m: ModuleObj, args, kwargs, node, env) -> V:
    for ext in ip.sem.modules:
        if ext.forward is not None:
            v = ext.forward(ip, m, args, kwargs, node)
            if v is not None:
                return v
    if m.cls is not None:
        fwd = m.cls.lookup("forward")
        if fwd is not None:
            return ip.call_function(fwd, args, kwargs, node, self_v=module_value(m))
        call = m.cls.lookup("__call__")
        if call is not None:
            return ip.call_function(call, args, kwargs, node, self_v=module_value(m))
        spec = table_base(m.cls)
        if spec is None:
            return ip.opaque_call(None, args, kwargs, node, extra=module_value(m), record=None)
    else:
        spec = m.spec
    x = args[0] if args and isinstance(args[0], V) else UNKNOWN
    if spec == "Sequential":
        if m.unordered and m.alternatives is not None:
            # one of several known chains: what each makes of the input, joined. A position that may
            # hold one of several modules (`nn.BatchNorm2d(c) if use_bn else nn.Sequential()`) is run
            # as separate chains while they are few: joined, the in-place ReLU after it would change
            # the input the norm saved, which only the identity arm passes on
            chains = [c for chain in m.alternatives for c in _spelled_out(chain)]
            outs = []
            for chain in chains:
                out = x
                for candidates in chain:
                    out = join_all([module_call(ip, child, [out], {}, node, env) for child in candidates])
                outs.append(out)
            return join_all(outs)
        if m.unordered:
            # the children's order is not known: what reaches the output is, what happens in
            # place between them is not
            units = m.units()
            pv = V(
                Kind.TENSOR,
                frozenset(units),
                org=frozenset(u for u in units if u.kind != Unit.OPAQUE),
                weak=frozenset(u for u in units if u.kind == Unit.OPAQUE),
            )
            return ip.tensor_result(flow_of(x, pv), node)
        out = x
        for child in list(m.children.values()):
            if isinstance(child, ModuleObj):
                out = module_call(ip, child, [out], {}, node, env)
        if m.opaque_unit is not None:
            # layers the engine did not see being made sit somewhere in the chain
            out = ip.opaque_call(None, [out], {}, node, extra=V(Kind.MODULE, frozenset((m,))), record=None)
        return out
    if spec in T.PARAM_MODULES or spec in T.RECURRENT:
        units = [u for u in m.children.values() if isinstance(u, Unit)]
        pv = V(Kind.TENSOR, frozenset(units), org=frozenset(units))
        if m.opaque_unit is not None:
            # a subclass whose base's parameters the engine did not see registered
            pv = flow_of(pv, V(Kind.TENSOR, frozenset((m.opaque_unit,)), weak=frozenset((m.opaque_unit,)))).value()
        argv = [a for a in args if isinstance(a, V)]
        f = flow_of(*argv, pv)
        saves_in = T.MODULE_SAVES.get(spec) == "input"
        # a recurrent module's weights are saved when its input or its carried state needs grad
        xin = flow_of(*argv).value() if spec in T.RECURRENT and len(argv) > 1 else x
        # saved as a linear map's input is; named as the functional the layer runs, for messages
        label = T.MODULE_FUNCTIONS.get(spec) if saves_in else None
        out = ip.tensor_result(
            f, node, op="linear" if saves_in else None, inputs=(xin, pv), shape=module_shape(m, x), label=label
        )
        if spec.endswith("Cell") and len(argv) > 1 and ip.st.nograd is None and requires_grad(argv[1]):
            # a cell multiplies its carried state by weight_hh: with a state that requires grad,
            # backward keeps the weights (a step() changing them in place invalidates the graph)
            sure = surely_requires_grad(argv[1])
            out = out.replace(
                saves=out.saves
                | frozenset(
                    SaveRec(u, u.version, Site(ip.st.sf, node), "linear", ip.st.ctx, sure, tuple(ip.st.path))
                    for u in units
                )
            )
        if spec in T.RECURRENT and ip.st.nograd is None:
            # a recurrent layer's backward keeps its weights and workspace whatever needs grad;
            # its outputs (sequence, hidden state) share that one graph node
            out = out.replace(
                saves=out.saves
                | frozenset(
                    SaveRec(u, u.version, Site(ip.st.sf, node), "rnn", ip.st.ctx, path=tuple(ip.st.path)) for u in units
                )
            )
        if spec in T.RECURRENT and x is not None and x.marks & Mark.PACKED:
            out = out.replace(marks=out.marks | Mark.PACKED)  # a packed sequence in, a packed sequence out
        if spec in T.RECURRENT and any(k.startswith("bias") for k in m.children):
            # with biases, every state is a function of learned affine maps (gates of Wx + Uh + b):
            # the zero vector only on a null set of weights, like a biased layer's output
            out = out.replace(marks=out.marks | Mark.DENSE)
        if spec == "LSTM" and ip.st.nograd is None and requires_grad(out) and not out.marks & Mark.PACKED:
            # torch's LSTM kernels (CPU and cuDNN alike) keep the output sequence for backward:
            # `o.masked_fill_(~mask, 0)` on it raises "modified by an inplace operation" (GRU and
            # RNN keep theirs only under cuDNN)
            site = Site(ip.st.sf, node)
            sure = surely_requires_grad(out)
            out = out.replace(
                saves=out.saves
                | frozenset(
                    SaveRec(t, t.version, site, "lstm", ip.st.ctx, sure, tuple(ip.st.path))
                    for t in out.objs
                    if isinstance(t, TensorObj)
                )
            )
        if spec in T.RECURRENT or spec == "MultiheadAttention":
            dense = out.marks & Mark.DENSE
            h = ip.tensor_result(f, node).replace(saves=out.saves, marks=dense)
            if spec == "LSTM":
                c = ip.tensor_result(f, node).replace(saves=out.saves, marks=dense)
                return make_tuple([out, make_tuple([h, c], node)], node)
            return make_tuple([out, h], node)
        if spec.endswith("Cell") and any(k.startswith("bias") for k in m.children):
            # a cell's gates are learned affine maps with biases: its states are dense as an RNN's
            out = out.replace(marks=out.marks | Mark.DENSE)
        if spec.endswith("Cell") and spec.startswith("LSTM"):
            c = ip.tensor_result(f, node).replace(marks=out.marks & Mark.DENSE)
            return make_tuple([out, c], node)
        return numeric_ops.numeric(ip, spec, (x,), node, out, biased="bias" in m.children or m.dense_rows)
    if spec in T.LOSS_MODULES:
        argv = [a for a in args if isinstance(a, V)]
        red = m.dims[1] if m.dims else None
        out = ip.tensor_result(
            flow_of(*argv),
            node,
            op=T.MODULE_FUNCTIONS.get(spec),
            inputs=tuple(argv),
            reduced=True,
            shape=loss_shape(T.MODULE_FUNCTIONS.get(spec), red, argv),
        )
        if red == "none":
            out = numeric_ops.unreduced_loss(
                T.MODULE_FUNCTIONS.get(spec), argv, out.replace(facts=out.facts | Fact.UNREDUCED)
            )
        misuse = numeric_ops.loss_misuse(
            ip, T.MODULE_FUNCTIONS.get(spec), argv, node, node.args[0] if getattr(node, "args", None) else None
        )
        if misuse:
            out = out.replace(risks=out.risks | misuse)
        out = numeric_ops.loss_reads(ip, T.MODULE_FUNCTIONS.get(spec), argv, node, out)
        recording.note_regression(ip, T.MODULE_FUNCTIONS.get(spec), argv)
        return recording.loss_value(ip, out, argv, f"`{m.label}`" if not m.label.startswith("<") else spec)
    if spec in T.FREE_MODULES:
        f = flow_of(*[a for a in args if isinstance(a, V)])
        if (m.inplace and spec != "Dropout") or (m.inplace and spec.startswith("Dropout")):
            # the in-place form of the functional forward() runs (nn.ReLU6(inplace=True): hardtanh_)
            return tensors.inplace_update(ip, x, None, node, node, op=T.MODULE_FUNCTIONS.get(spec, spec.lower()))
        if spec == "Identity":
            return x
        if spec in T.VIEW_MODULES:
            return ip.tensor_result(f, node, alias=x)
        # what backward saves is the functional's (the table says it saves what the module saves)
        op = T.MODULE_FUNCTIONS.get(spec) if T.MODULE_SAVES.get(spec) else None
        return numeric_ops.numeric(
            ip, spec, (x,), node, ip.tensor_result(f, node, op=op, inputs=(x,), shape=module_shape(m, x))
        )
    if spec in T.CONTAINERS:
        return UNKNOWN  # ModuleList, ModuleDict...: no forward()
    # opaque torch module, or a module from a factory the engine could not follow
    return ip.opaque_call(None, args, kwargs, node, extra=module_value(m), record=None)


def module_method(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv: V, base=False) -> V:
    """`m.name(...)`: the class's own method, what a library or framework gives the module, a
    submodule called by name, else nn.Module's method (MODULE_METHODS). `base`: nn.Module's own
    method, reached through super() from an override."""
    if name == "reset_parameters":
        # the parameters start over: an optimizer built after this in a loop iteration is a fresh run's
        ip.st.trace.resets.append((frozenset(u.oid for u in m.units()), ip.seq()))
    if m.cls is not None and not base:
        fn = m.cls.lookup(name)
        if fn is not None:
            # a @staticmethod called on the module gets no self (`net.train_step(net, opt, x)`)
            self_v = (
                None if fn.is_static else V(Kind.CLASS, frozenset((m.cls,))) if fn.is_classmethod else module_value(m)
            )
            return ip.call_function(fn, args, kwargs, node, self_v=self_v)
    for ext in ip.sem.modules:
        if ext.method is not None:
            v = ext.method(ip, m, name, args, kwargs, node)
            if v is not None:
                return v
    if name in m.children or name in m.attrs:
        return ip.call_value(module_attr(ip, m, name, node), args, kwargs, node, env)
    handler = MODULE_METHODS.get(name)
    if handler is not None:
        out = handler(ip, m, name, args, kwargs, node, env, recv)
        if out is not None:
            return out
    if name in T.MODULE_SELF_METHODS:
        return recv  # .to(device), .cuda(), .float(): the module itself
    if m.opaque or m.cls is not None:
        # this module only: `recv` may join every submodule (`for m in self.modules(): m.f()`);
        # a tensor's read-only method (`.detach()`, `.clone()`, `.item()`) means the value is a tensor
        # the engine took for a module (a library model's weight): reading it changes nothing
        reads = name in T.TENSOR_READS
        return ip.opaque_call(None, args, kwargs, node, extra=module_value(m), record=None if reads else "method")
    return UNKNOWN


# ---------------------------------------------------------------- nn.Module's methods, by name
# (ip, m, name, args, kwargs, node, env, recv) -> V, or None: not this call (the next rule applies)


def _parameters(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    units = m.units()
    exact = not any(u.kind == Unit.OPAQUE and not is_closed(u) for u in units)
    pi = PIter(
        frozenset(units),
        exact=exact,
        sources=frozenset((m,)),
        named=name == "named_parameters",
        site=Site(ip.st.sf, node),
    )
    return V(Kind.PARAMS, frozenset((pi,)), site=node)


def _children(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    if "modules" not in name:
        # children in registration order, one element each: `nn.Sequential(*list(vgg.features.children())[:13])`
        # keeps the layers in their order (joined, an in-place ReLU could seem to follow any layer)
        named = [(k, c) for k, c in m.children.items() if isinstance(c, ModuleObj)]
        lst = ListObj(None, Site(ip.st.sf, node))
        if name.startswith("named"):
            lst.extend(
                [make_tuple([const(k) if isinstance(k, str) else V(Kind.STR), module_value(c)], None) for k, c in named]
            )
        else:
            lst.extend([module_value(c) for _, c in named])
        lst.exact = True
        return V(Kind.LIST, frozenset((lst,)))
    kids = m.submodules()
    content = join_all([module_value(c) for c in kids]) if kids else None
    if content is not None and name.startswith("named"):
        content = make_tuple([V(Kind.STR), content], None)
    return V(Kind.LIST, frozenset((ListObj(content, Site(ip.st.sf, node)),)))


def _zero_grad(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    ip.event(EventKind.ZERO_GRAD, node, m, units=frozenset(m.units()))
    return NONE


def _requires_grad(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    flag = args[0].const if args and isinstance(args[0], V) else kwargs.get("requires_grad", const(True)).const
    flag = flag if isinstance(flag, bool) else None
    units = [u for u in m.units() if freezable(u)]
    if units:
        leaves.freeze(ip, units, flag, node, module_value(m))
    return recv


def _train_eval(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    mode = name != "eval"
    given = args[0] if args else kwargs.get("mode")
    if name == "train" and isinstance(given, V):
        mode = given.const if isinstance(given.const, bool) else None
    set_training(ip, m, mode)
    return recv


def _apply(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V | None:
    if not args:
        return None
    for sub in m.submodules()[:64]:
        ip.call_value(args[0], [module_value(sub)], {}, node, env)
    return recv


def _forward(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    return module_call(ip, m, args, kwargs, node, env)


def _load_state_dict(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    # weights handed over from another module (`target.load_state_dict(net.state_dict())`), or
    # loaded again and again in the loop: a target network, updated by loads. A checkpoint loaded
    # once before training (resuming, pretrained weights) leaves the module a trained one.
    src = args[0] if args else kwargs.get("state_dict")
    from_module = isinstance(src, V) and any(
        isinstance(o, DictObj) and o.state_of is not None and o.state_of is not m for o in src.objs
    )
    if from_module or any(c[0] == "loop" for c in ip.st.ctx):
        m.loaded_from = True
    return NONE


def _state_dict(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    d = DictObj(None)
    d.state_of = m
    return V(Kind.DICT, frozenset((d,)))


def _register_parameter(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V | None:
    if len(args) <= 1:
        return None
    key = args[0].const if isinstance(args[0].const, str) else None
    register_all(ip, m, key, [u for u in args[1].objs if isinstance(u, Unit)])
    return NONE


def _add_module(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V | None:
    if len(args) <= 1:
        return None
    key = args[0].const if isinstance(args[0].const, str) else None
    given = args[1]
    # torch takes only a module here: a layer of a library the engine cannot read is one
    stand_in = ip.sem.unseen_module(ip, given) if not given.objs else None
    register_all(ip, m, key, [stand_in] if stand_in is not None else given.of(ModuleObj))
    return NONE


def _register_buffer(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V | None:
    if not args:
        return None
    key = args[0].const if isinstance(args[0].const, str) else None
    if key:
        given = args[1] if len(args) > 1 and isinstance(args[1], V) else None
        # the tensor itself (a causal mask keeps what it is), as a buffer: no gradient
        m.attrs[key] = (
            given.replace(facts=given.facts | Fact.NOGRAD)
            if given is not None and given.k & Kind.TENSOR
            else V(Kind.TENSOR, frozenset((TensorObj(Site(ip.st.sf, node)),)))
        )
    return NONE


def _container_add(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V | None:
    """`layers.append(...)`, `.extend(...)` of a ModuleList, `.update(...)` of a ModuleDict."""
    if m.spec not in T.CONTAINERS:
        return None
    src = args[-1] if args else UNKNOWN
    if name == "append":
        container_add(ip, m, src)
        return recv
    container_extend(ip, m, src)
    return NONE


def _get_submodule(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V | None:
    if not (args and isinstance(args[0].const, str)):
        return None
    cur = m
    for part in args[0].const.split("."):
        nxt = cur.children.get(part)
        if not isinstance(nxt, ModuleObj):
            return UNKNOWN
        cur = nxt
    return module_value(cur)


def _keyed_items(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V | None:
    """`.items()`, `.values()`, `.keys()` of a ModuleDict or ParameterDict."""
    if m.spec not in T.KEYED_CONTAINERS:
        return None
    kids = list(m.children.values())
    content = join_all([module_value(c) if isinstance(c, ModuleObj) else unit_value(c) for c in kids]) if kids else None
    if name == "items" and content is not None:
        content = make_tuple([V(Kind.STR), content], None)
    if name == "keys":
        content = V(Kind.STR)
    return V(Kind.LIST, frozenset((ListObj(content, None),)))


def _buffers(ip: Core, m: ModuleObj, name, args, kwargs, node, env, recv) -> V:
    return V(Kind.LIST, frozenset((ListObj(V(Kind.TENSOR), None),)))


MODULE_METHODS: dict[str, Callable[..., V | None]] = {
    "parameters": _parameters,
    "named_parameters": _parameters,
    "children": _children,
    "modules": _children,
    "named_children": _children,
    "named_modules": _children,
    "zero_grad": _zero_grad,
    "requires_grad_": _requires_grad,
    "train": _train_eval,
    "eval": _train_eval,
    "apply": _apply,
    "forward": _forward,
    "__call__": _forward,
    "load_state_dict": _load_state_dict,
    "state_dict": _state_dict,
    "register_parameter": _register_parameter,
    "add_module": _add_module,
    "register_module": _add_module,
    "register_buffer": _register_buffer,
    "append": _container_add,
    "extend": _container_add,
    "insert": _container_add,
    "update": _container_add,
    "get_submodule": _get_submodule,
    "items": _keyed_items,
    "values": _keyed_items,
    "keys": _keyed_items,
    "buffers": _buffers,
    "named_buffers": _buffers,
}


def module_getitem(ip: Core, m: ModuleObj, index: V, node) -> V:
    """`layers[0]`, `blocks["enc"]`, `seq[1:]` of a container module."""
    key = index.const
    if isinstance(key, int) and not isinstance(key, bool):
        kids = list(m.children.values())
        if -len(kids) <= key < len(kids):
            child = kids[key]
            return module_value(child) if isinstance(child, ModuleObj) else unit_value(child)
    if isinstance(key, str) and key in m.children:
        child = m.children[key]
        return module_value(child) if isinstance(child, ModuleObj) else unit_value(child)
    if isinstance(node.slice, ast.Slice):
        return module_value(m)
    kids = list(m.children.values())
    return join_all([module_value(c) if isinstance(c, ModuleObj) else unit_value(c) for c in kids]) if kids else UNKNOWN


def module_setitem(ip: Core, m: ModuleObj, index: V, value: V, stmt, target, env) -> None:
    """`layers[i] = nn.Linear(...)`, `heads["cls"] = ...`: the module registers what it is given."""
    key = index.const
    mods = [x for x in value.objs if isinstance(x, (ModuleObj, Unit))]
    if mods:
        k = str(key) if isinstance(key, (int, str)) else f"[{len(m.children)}]"
        if isinstance(key, int) and not isinstance(key, bool):
            keys = list(m.children.keys())
            if -len(keys) <= key < len(keys):
                k = keys[key]
        register_all(ip, m, k, mods)


# ---------------------------------------------------------------- calls of torch.nn names


def new_parameter(ip: Core, qual, args, kwargs, node, env) -> V:
    return make_parameter(ip, args, kwargs, node)


def new_module(ip: Core, qual, args, kwargs, node, env) -> V:
    """`nn.Linear(...)`, `nn.Sequential(...)`; `nn.DataParallel(model)` is the model."""
    short = qual.rpartition(".")[2]
    if short in T.WRAPPERS:
        passed = passthrough(args[:1])
        if passed is not None:
            return passed
    return make_module(ip, short, qual, args, kwargs, node)


def copy_module(ip: Core, qual, args, kwargs, node, env) -> V:
    """`copy.deepcopy(model)`: new parameters with the same structure (a target network, an EMA)."""
    return deepcopy(ip, args[0] if args else UNKNOWN, node)


def init_function(ip: Core, qual, args, kwargs, node, env) -> V:
    """`nn.init.xavier_uniform_(w)`: the tensor it fills, unchanged as far as gradient goes; the
    parameters it fills start over (an optimizer built after it in a loop iteration is a fresh run's)."""
    if args and isinstance(args[0], V):
        units = [o for o in args[0].objs if isinstance(o, Unit)]
        if units:
            ip.st.trace.resets.append((frozenset(u.oid for u in units), ip.seq()))
    return args[0] if args else NONE


def wrapper(ip: Core, qual, args, kwargs, node, env) -> V | None:
    """`DDP(model)`, `torch.compile(model)` from wherever they are imported: the model."""
    return passthrough(args[:1])


def _dims(short, consts, kw):
    """Constructor constants that fix the output's shape, or a loss module's reduction."""
    if short in T.LOSS_MODULES:
        red = kw.get("reduction", "mean")
        return ("reduction", red if isinstance(red, str) else None)
    names = T.MODULE_DIM_ARGS.get(short)
    if names is None:
        return None
    vals = [kw.get(n, consts[i] if i < len(consts) else None) for i, n in enumerate(names)]
    return tuple(v if isinstance(v, int) and not isinstance(v, bool) else None for v in vals)


def module_shape(m, x: V):
    """A torch module's output shape for an input of known shape."""
    xs = x.shape if isinstance(x, V) else None
    if xs is None or m.dims is None:
        if m.spec in T.FREE_MODULES and m.spec not in T.LOSS_MODULES and m.spec not in T.VIEW_MODULES:
            return xs  # activations, dropout: elementwise
        if m.spec in T.SHAPE_KEEPING_MODULES:
            return xs  # normalisations
        return None
    if m.spec == "Linear" and xs:
        return xs[:-1] + (m.dims[1],)
    if m.spec == "Embedding":
        return xs + (m.dims[1],)
    return None

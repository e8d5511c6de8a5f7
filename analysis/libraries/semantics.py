"""Library models inside the interpreter: building them, calling them, their methods, and the
submodules read from the parts the engine cannot see.

A library model is a ModuleObj with `lib` set. What its Shape lists (from the library's source)
is built as ordinary submodules and parameters; what it does not list is one opaque parameter
leaf per module, *closed*: it stands for parameters no other known leaf is, so an optimizer
built from it still holds exactly what it holds, and freezing all of it is a proof like any
other. Attributes read from an unseen part become opaque submodules carved out of it: the
optimizers and freezes that held the whole hold the part too.

Handlers of the semantics tables (libraries/register.py): the fallback for calls of library names,
the nn.Module extension for library models, and which library classes are module bases.
"""

from __future__ import annotations

import ast
import re

from ..interp import results as R
from ..interp.core import Core
from ..interp.objects import FROZEN, MAYBE, ModuleObj, OptimObj, Site, TensorObj, Unit, module_value
from ..interp.semantics import ModuleExtension
from ..interp.trace import SaveRec
from ..interp.values import EMPTY, NONE, Flow, Kind, Mark, Star, V, join_all, surely_requires_grad
from ..torch import leaves, modules, optimizers
from . import adapters
from .schedulers import table_factory
from .shapes import OPAQUE_KEY, LibModel, Shape
from .tables import PLAIN_ATTRS, is_module_base, is_optimizer_name, optimizer_params_arg, worth_asking


class LibInfo:
    """What a ModuleObj of a library model knows of itself."""

    __slots__ = ("carved", "model", "shape")

    def __init__(self, model: LibModel | None, shape: Shape | None, carved=False):
        self.model = model
        self.shape = shape
        self.carved = carved


def libraries(ip: Core):
    return getattr(ip.st.program, "libraries", None)


def library_call(ip: Core, qual: str, args, kwargs, node) -> V | None:
    """`BertForSequenceClassification(config)`, `resnet18()`, `timm.create_model(...)`: a module."""
    if ip.library is not None:
        return None
    peft = adapters.peft_adapters(ip, qual, args, kwargs, node)
    if peft is not None:
        return peft
    opt = _library_optimizer(ip, qual, args, kwargs, node) or _library_scheduler(ip, qual, args, kwargs, node)
    if opt is not None:
        return opt
    libs = libraries(ip) if worth_asking(qual) else None
    if libs is None:
        if not _evidence_says_module(ip, node):
            return None
        lm = LibModel(qual, qual, "evidence", note="its parameters are given to a torch optimizer")
        return materialize(ip, lm, args, kwargs, node)
    consts = [a.const for a in args if isinstance(a, V)]
    lm = libs.resolve(qual, tuple(c for c in consts[:1] if isinstance(c, str)), _const_kwargs(kwargs))
    if lm is None:
        if not _evidence_says_module(ip, node):
            return None
        lm = LibModel(qual, qual, "evidence", note="its parameters are given to a torch optimizer")
    return materialize(ip, lm, args, kwargs, node)


def _library_optimizer(ip: Core, qual, args, kwargs, node) -> V | None:
    """`timm.optim.create_optimizer_v2(model, "adamw")`: an optimizer over the model's parameters
    (its groups split them, but hold nothing else: what is made later is in none of them)."""
    where = optimizer_params_arg(qual)
    if where is None:
        return None
    pos, key = where
    given = kwargs.get(key, args[pos] if len(args) > pos else None)
    if not isinstance(given, V):
        return None
    mods = given.of(ModuleObj)
    params = given
    if mods:
        params = join_all(
            [modules.module_method(ip, m, "parameters", [], {}, node, None, module_value(m)) for m in mods]
        )
    return optimizers.make_optimizer(ip, qual, [params], {}, _bare_call(node), None)


def _library_scheduler(ip: Core, qual, args, kwargs, node) -> V | None:
    """`get_linear_schedule_with_warmup(optimizer, ...)`: a torch scheduler over that optimizer
    (library_schedulers.py). Asked only of calls given an optimizer."""
    given = [a for a in list(args) + list(kwargs.values()) if isinstance(a, V) and a.of(OptimObj)]
    if not given or not worth_asking(qual):
        return None
    libs = libraries(ip)
    fact = (libs.scheduler_factory(qual) if libs is not None else None) or table_factory(qual)
    if fact is None:
        return None
    opt = kwargs.get(fact.keyword, args[fact.position] if len(args) > fact.position else None)
    if not isinstance(opt, V) or not opt.of(OptimObj):
        return None
    cls = fact.torch_class(args, kwargs)
    # the scheduler's type is the torch class it is; one picked by an unreadable name keeps
    # the factory's name (GA207 then leaves alone a step() given a metric: a plateau schedule)
    made = f"torch.optim.lr_scheduler.{cls}" if cls else qual
    return optimizers.make_scheduler(ip, made, [opt], {}, node)


def named_optimizer(ip: Core, qual, args, kwargs, node, env) -> V:
    """Another library's optimizer called like torch's (`Lion(params, lr=...)`), modelled as torch's.
    One known only by its name (`AnalogSGD`: tables.named_as_optimizer) says so in its premises."""
    out = optimizers.new_optimizer(ip, qual, args, kwargs, node, env)
    short = qual.rsplit(".", 1)[-1]
    if not is_optimizer_name(short):
        for o in out.of(OptimObj):
            o.assumed = (
                f"`{short}` is another library's class the engine does not model, taken for an optimizer "
                "because it is named like one and called like one"
            )
    return out


def library_base(ip: Core, qual: str) -> str | None:
    """What an imported base class makes a user class: 'base' (a module registering nothing
    itself: LightningModule, PreTrainedModel), 'module' (a library module: opaque parameters)."""
    if is_module_base(qual):
        return "base"
    if ip.library is not None or not worth_asking(qual):
        return None
    libs = libraries(ip)
    if libs is None:
        return None
    defn = libs.define(qual)
    if defn is None or defn.kind != "class":
        return None
    return "module" if libs.class_is_module(defn) else None


def _evidence_says_module(ip: Core, node) -> bool:
    """(3) in the code itself: the assigned name's `.parameters()` go to a torch optimizer."""
    stmt = ip.st.cur_stmt
    if ip.st.sf is not ip.st.entry or not isinstance(stmt, ast.Assign) or stmt.value is not node:
        return False
    targets = [ip.st.sf.segment(t) for t in stmt.targets]
    # the text test first: walking the file's tree costs more than all the unknown calls it settles
    src = ip.st.entry.source
    if not any(f"{t}.parameters()" in src or f"{t}.named_parameters()" in src for t in targets):
        return False
    names = _optimized_receivers(ip.st.entry)
    return any(t in names for t in targets)


def materialize(ip: Core, lm: LibModel, args, kwargs, node) -> V:
    site = Site(ip.st.sf, node)
    seq = ip.seq()
    m = _build(
        ip,
        lm.shape,
        f"<{(lm.shape.type if lm.shape else lm.qual.rsplit('.', 1)[-1])}>",
        site,
        seq,
        lm,
        repeated=False,
        force_opaque=lm.shape is None,
    )
    # what a wrapper is given (a backbone, a model to adapt) is part of it
    for i, a in enumerate(list(args) + [v for k, v in kwargs.items() if k != "**"]):
        v = a.value if isinstance(a, Star) else a
        if not isinstance(v, V):
            continue
        for o in v.objs:
            if isinstance(o, ModuleObj) and o is not m:
                m.register(f"<arg{i}>", o)
    created = m.units()
    leaves.note_new_units(ip, [u for u in created if u.owner is not None and _inside(u.owner, m)], node)
    ip.st.trace.libraries.append(m)
    if _pretrained(kwargs):
        # weights loaded as the model is built (`vgg19(pretrained=True)`, `weights=...`): a network that
        # no optimizer holds is a fixed one (a perceptual loss's features), like a load_state_dict target
        m.loaded_from = True
    return module_value(m)


def _pretrained(kwargs) -> bool:
    flag = kwargs.get("pretrained")
    if isinstance(flag, V) and flag.const is True:
        return True
    weights = kwargs.get("weights")
    return isinstance(weights, V) and weights.const is not None and weights.k != Kind.NONE


def _build(ip: Core, shape: Shape | None, label, site, seq, lm=None, repeated=False, force_opaque=False) -> ModuleObj:
    m = ModuleObj(
        label,
        site,
        seq,
        qual=(shape.qual if shape is not None and shape.qual else (lm.canonical if lm is not None else None)),
    )
    m.lib = LibInfo(lm, shape)
    if shape is None:
        _open_opaque(m)
        return m
    m.spec = shape.spec or None
    m.inplace = shape.inplace
    rep = repeated or shape.repeated
    for name, frozen in shape.params:
        u = Unit(Unit.PARAM, name, site, seq, count=1)
        if frozen:
            u.frozen = FROZEN
        if rep:
            u.created_in_loop = u.in_init = True
        m.register(name, u)
    for name, child in shape.children:
        m.register(name, _build(ip, child, f"<{name}>", site, seq, None, rep))
    for name, path in shape.aliases:
        target = _at_path(m, path)
        if target is not None:
            m.children[name] = target
    if shape.opaque or force_opaque:
        _open_opaque(m)
    if lm is not None:
        for a, b in shape.ties:
            _tie(m, a, b)
    return m


def library_forward(ip: Core, m: ModuleObj, args, kwargs, node) -> V:
    """The output of a library model: gradient from its parameters (per the forward summary when
    the source was read; all of them otherwise), and from its inputs."""
    f = Flow()
    for a in list(args) + [v for k, v in kwargs.items() if k != "**"]:
        v = a.value if isinstance(a, Star) else a
        if isinstance(v, V):
            f.add(v)
    lib = m.lib
    assert lib is not None  # a library model (semantics.LIBRARY_MODELS asks only of those)
    shape = lib.shape
    units = m.units()
    unk: Site | bool
    weak: frozenset
    if shape is None or shape.forward is None:
        org, weak, unk = frozenset(units), frozenset(), Site(ip.st.sf, node)
    else:
        org, weak = _forward_units(m, shape)
        unk = False
    # what the inputs' graphs saved is not passed on: the library may detach them (a memory or
    # a cache carried from the previous output), and a GA301 needs the graph to be certain
    saves = EMPTY
    lm = lib.model
    read = shape is not None and shape.forward is not None
    if (read or (lm is not None and lm.how == "table")) and ip.st.nograd is None and org:
        # a network whose forward runs on its parameters (read from source, or a model the
        # table knows: transformers, timm, torchvision) keeps tensors for its backward (every
        # layer with weights saves its input or its weights): the graph a backward() frees, so
        # a second backward through this output raises (GA301). Its storage is inside the
        # library: nothing the user writes changes it in place.
        site = Site(ip.st.sf, node)
        saves = frozenset(
            (
                SaveRec(
                    TensorObj(site),
                    0,
                    site,
                    "<library forward>",
                    ip.st.ctx,
                    surely_requires_grad(V(Kind.TENSOR, EMPTY, org)),
                ),
            )
        )
    # a network's output as it leaves its last layer (a classifier's logits, a backbone's features):
    # unbounded, so a softmax or logsumexp written by hand over it overflows (GA404, suspicious: the
    # engine does not see that last layer)
    marks = Mark.LOGITS | Mark.NET_OUT if org else 0
    out = V(
        Kind.UNKNOWN,
        EMPTY,
        f.org | org,
        (f.weak | weak) - org,
        f.top,
        f.cuts,
        saves,
        site=node,
        unk=unk or f.unk,
        marks=marks,
    )
    if ip.st.nograd is not None and out.carries:
        out = R.cut_nograd(ip, out, ip.st.nograd)
    return out


def library_method(ip: Core, m: ModuleObj, name, args, kwargs, node) -> V | None:
    shape = m.lib.shape if m.lib is not None else None
    effect = shape.method(name) if shape is not None else None
    if effect is None and _MAY_CHANGE_GRAD.search(name):
        # `model.unfreeze_encoder()`, `enable_input_require_grads()`: a library method the engine
        # does not follow may switch requires_grad back on; a freeze before it is no proof
        for u in m.units():
            if u.frozen == FROZEN:
                u.frozen = MAYBE
    if shape is None:
        return None
    if effect is None:
        if name in ("forward", "__call__"):
            return library_forward(ip, m, args, kwargs, node)
        return None
    consts = [a.const for a in args if isinstance(a, V)]
    kw = _const_kwargs(kwargs)
    libs = libraries(ip)
    if (
        (args or kwargs)
        and len(consts) == len(args)
        and all(_simple(c) for c in consts)
        and len(kw) == len([k for k in kwargs if k != "**"])
        and libs is not None
        and m.lib.model is not None
    ):
        # the same method with these arguments (`reset_classifier(3)`: a Linear, not "maybe one")
        precise = libs.method_effect(m.lib.model, name, tuple(consts), kw)
        if precise is not None:
            effect = precise
    site = Site(ip.st.sf, node)
    created = []
    for path, sub in effect.replaces:
        parent_path, _, key = path.rpartition(".")
        parent = _at_path(m, parent_path) if parent_path else m
        if not isinstance(parent, ModuleObj):
            continue
        new = _build(ip, sub, f"<{key}>", site, ip.seq(), None)
        parent.register(key, new)
        created.extend(new.units())
    leaves.note_new_units(ip, created, node)
    if effect.returns is not None:
        target = _at_path(m, effect.returns) if effect.returns else m
        if isinstance(target, ModuleObj):
            return module_value(target)
    return (
        NONE if not effect.unknown else ip.opaque_call(None, args, kwargs, node, extra=module_value(m), record="method")
    )


def library_attr(ip: Core, m: ModuleObj, attr, node) -> V | None:
    """An attribute of a library model's unseen part: a plain value, or a submodule carved out."""
    if attr in PLAIN_ATTRS or attr.startswith("_"):
        return V(Kind.UNKNOWN, site=node)
    if not m.opaque and m.opaque_unit is None:
        return None
    whole = m.opaque_unit
    sub = ModuleObj(f"<{attr}>", m.site, m.seq, qual=None)
    sub.lib = LibInfo(None, None, carved=True)
    _open_opaque(sub)
    part = sub.opaque_unit
    assert part is not None  # _open_opaque made it
    if whole is not None:
        part.frozen = whole.frozen
        part.created_in_loop, part.in_init = whole.created_in_loop, whole.in_init
        _carve(ip, whole, part)
    m.children[attr] = sub
    sub.parent, sub.key = m, attr
    return module_value(sub)


def _carve(ip: Core, whole: Unit, part: Unit):
    """`part` was inside `whole` all along: whatever held the whole holds it too."""
    for o in ip.st.trace.optimizers:
        for g in o.groups:
            if whole in g.units:
                g.units = g.units | {part}
    for fr in ip.st.trace.freezes:
        if whole in fr.units:
            fr.units = fr.units | {part}
    # reset with it (`conv.reset_parameters()` before `conv.lin` is read): a fresh run's optimizer
    resets = ip.st.trace.resets
    for i, (oids, seq) in enumerate(resets):
        if whole.oid in oids:
            resets[i] = (oids | {part.oid}, seq)


# ---------------------------------------------------------------- entries of the semantics tables


def library_fallback(ip: Core, qual, args, kwargs, node, env) -> V | None:
    return library_call(ip, qual, args, kwargs, node)


def _forward(ip: Core, m: ModuleObj, args, kwargs, node) -> V | None:
    if m.lib is not None and m.cls is None and not m.spec:
        return library_forward(ip, m, args, kwargs, node)
    return None


def _method(ip: Core, m: ModuleObj, name, args, kwargs, node) -> V | None:
    if m.lib is not None and m.cls is None:
        return library_method(ip, m, name, args, kwargs, node)
    return None


def unseen_library_module(ip: Core, v) -> ModuleObj | None:
    """What `add_module(name, v)` registers (or nn.Sequential, nn.ModuleList hold) when `v` was made by a call
    of a library the engine cannot read (monai's `Convolution(...)`, its package not installed): torch
    takes only an nn.Module there, so it is one, of unseen parameters (as a library model whose structure is
    unseen), instead of an unknown value that left the whole model unknown."""
    if (
        ip.library is not None
        or not isinstance(v, V)
        or v.objs
        or not v.k & Kind.UNKNOWN
        or not isinstance(v.unk, Site)
    ):
        return None
    call = v.unk.node
    if v.unk.mod is not ip.st.sf or not isinstance(call, ast.Call):
        return None
    qual = _library_name(ip, call.func)
    if qual is None:
        return None
    lm = LibModel(qual, qual, "evidence", note="add_module or a module container is given it, which take only modules")
    made = materialize(ip, lm, [], {}, call)
    return next(iter(made.of(ModuleObj)), None)


def unknown_callee_model(ip: Core, args, kwargs, node) -> V | None:
    """`model = getattr(models, args.arch)(...)`, `models.__dict__[name]()`: a callable the engine
    cannot follow, whose result's `.parameters()` the file gives a torch optimizer, made a module of
    unseen parameters (as a call of a library that is not installed), so that the loss and the
    optimizer share them instead of each holding an unknown value."""
    if ip.library is not None or not isinstance(node, ast.Call) or not _evidence_says_module(ip, node):
        return None
    lm = LibModel(
        "<model>",
        ip.st.sf.segment(node.func),
        "evidence",
        note="made by a call the engine cannot follow; its parameters are given to a torch optimizer",
    )
    return materialize(ip, lm, args, kwargs, node)


def annotated_module(ip: Core, name: str, node) -> V | None:
    """`def train_one_epoch(model: torch.nn.Module, ...)` run on unknown arguments: its caller, not
    seen, gives it a module, of parameters the engine does not see (as a model a call the engine
    cannot follow makes), instead of an unknown value whose calls give nothing known."""
    if ip.library is not None:
        return None
    lm = LibModel("<model>", name, "evidence", note="a parameter annotated as an nn.Module")
    return materialize(ip, lm, [], {}, node)


def _library_name(ip: Core, func) -> str | None:
    """The dotted library name a call's function is, read from the file's imports: `Convolution` of
    `from monai.networks.blocks import Convolution`, `blocks.Convolution` of `from monai.networks
    import blocks`. None for anything else (the project's code, torch, a local)."""
    attrs = []
    while isinstance(func, ast.Attribute):
        attrs.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    scope = ip.st.scopes.get(ip.st.sf.abspath)
    v = scope.globals.get(func.id) if scope is not None else None
    if v is None or v.objs or not v.k & Kind.MODREF or not isinstance(v.const, str):
        return None
    qual = ".".join([v.const, *reversed(attrs)])
    return qual if worth_asking(qual) and not qual.startswith("torch.") else None


def _attr(ip: Core, m: ModuleObj, attr, node) -> V | None:
    if m.lib is not None:
        return library_attr(ip, m, attr, node)
    return None


LIBRARY_MODELS = ModuleExtension(attr=_attr, forward=_forward, method=_method)


_MAY_CHANGE_GRAD = re.compile(r"freeze|grad|trainable|train_|requires|adapter|lora|peft|enable_|finetun", re.I)


def _simple(c) -> bool:
    return c is None or isinstance(c, (bool, int, float, str))


def _const_kwargs(kwargs) -> dict:
    return {k: v.const for k, v in kwargs.items() if k != "**" and isinstance(v, V) and _simple(v.const)}


def _bare_call(node) -> ast.Call:
    """The call node without its arguments: make_optimizer reads the params' node off it."""
    call = ast.Call(func=node.func, args=[], keywords=[])
    ast.copy_location(call, node)
    call.end_lineno, call.end_col_offset = node.end_lineno, node.end_col_offset
    return call


def _open_opaque(m: ModuleObj):
    m.opaque = True
    if m.opaque_unit is None:
        m.opaque_unit = Unit(Unit.OPAQUE, OPAQUE_KEY, m.site, m.seq, count=None)
        m.opaque_unit.owner, m.opaque_unit.attr = m, OPAQUE_KEY


def _inside(owner, root) -> bool:
    node, hops = owner, 0
    while node is not None and hops < 64:
        if node is root:
            return True
        node, hops = node.parent, hops + 1
    return False


def _at_path(m: ModuleObj, path: str):
    cur = m
    if not path:
        return m
    for part in path.split("."):
        if not isinstance(cur, ModuleObj):
            return None
        nxt = cur.children.get(part)
        if nxt is None:
            return None
        cur = nxt
    return cur


def _tie(m: ModuleObj, a: str, b: str):
    """Parameter `a` is parameter `b` (tied embeddings)."""
    pa, _, ka = a.rpartition(".")
    owner = _at_path(m, pa) if pa else m
    target = _at_path(m, b)
    if isinstance(owner, ModuleObj) and isinstance(target, Unit) and ka in owner.children:
        owner.children[ka] = target


def _forward_units(m: ModuleObj, shape: Shape):
    """Current leaves under `m`, split by the forward summary: certainly read / maybe read. A leaf
    the summary does not know (a head the user put in place of the library's) counts as its
    place's: under a name the forward reads, it is read."""
    fwd, weak_paths = set(shape.forward or ()), set(shape.forward_weak)
    known = fwd | weak_paths
    prefixes_org = {p.rsplit(".", 1)[0] for p in fwd}
    prefixes_weak = {p.rsplit(".", 1)[0] for p in weak_paths}
    org, weak = set(), set()
    stack = [(m, "")]
    seen = set()
    while stack:
        mod, prefix = stack.pop()
        if mod.oid in seen:
            continue
        seen.add(mod.oid)
        items = list(mod.children.items())
        if mod.opaque_unit is not None:
            items.append((OPAQUE_KEY, mod.opaque_unit))
        for k, c in items:
            path = prefix + k
            if isinstance(c, ModuleObj):
                stack.append((c, path + "."))
                continue
            if not isinstance(c, Unit):
                continue
            if path in fwd:
                org.add(c)
            elif path in weak_paths:
                weak.add(c)
            elif path not in known:
                place = _place(path, prefixes_org, prefixes_weak)
                (org if place == "org" else weak).add(c)
    return frozenset(org), frozenset(weak)


def _place(path: str, org_prefixes, weak_prefixes) -> str:
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:i])
        if any(p == head or p.startswith(head + ".") for p in org_prefixes):
            return "org"
        if any(p == head or p.startswith(head + ".") for p in weak_prefixes):
            return "weak"
    return "weak"


def _optimized_receivers(sf) -> frozenset:
    """Source text of every `X` in `X.parameters()` / `X.named_parameters()` handed to a call of a
    torch optimizer in `sf` (computed once per file)."""
    cached = getattr(sf, "_gradaudit_optimized", None)
    if cached is not None:
        return cached
    out = set()
    if ".parameters()" in sf.source or ".named_parameters()" in sf.source:
        for node in ast.walk(sf.tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if not is_optimizer_name(name):
                continue
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in ("parameters", "named_parameters")
                ):
                    out.add(sf.segment(sub.func.value))
    result = frozenset(out)
    try:
        sf._gradaudit_optimized = result
    except AttributeError:
        pass
    return result

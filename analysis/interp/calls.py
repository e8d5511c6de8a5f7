"""Calls of the abstract interpreter: user functions and classes, methods, attributes and items.

What a call of a name from outside the project does (torch, libraries, builtins) and what heap
objects with semantics do (modules, optimizers, tensors) is looked up in the semantics tables
(ip.sem, semantics.py); the rest is Python: functions run with their arguments bound, classes
instantiated, instances' attributes and methods, symbolic stand-ins for what cannot be seen.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable

from ..ops import torch_api as T
from ..source.program import installed
from . import containers, ducks, recording, repeats, settings, summaries
from . import results as R
from .core import Interp
from .frames import TRAINING_WORDS, Frame, mentions
from .loop_facts import attr_key, rebound, varies
from .objects import (
    STORAGE,
    BoundMethod,
    ClassObj,
    DictObj,
    FuncObj,
    GenCtxObj,
    InstanceObj,
    ListObj,
    ModuleObj,
    OptimObj,
    PartialObj,
    PIter,
    ScalerObj,
    Site,
    SuperObj,
    SymObj,
    TensorObj,
    Unit,
    in_order,
    module_value,
)
from .stateless import holds_no_state
from .trace import EventKind, UnseenRec
from .values import (
    EMPTY,
    NOCONST,
    NONE,
    UNKNOWN,
    Fact,
    Flow,
    Kind,
    Mark,
    QualRef,
    Star,
    V,
    flow_of,
    join,
    join_all,
    make_tuple,
)

# the arm of the first of several joined modules called at once (CANDIDATE - 1, ... for the next):
# negative, unlike the arms of an `if` (0, 1) or a `match` (1, 2, ...)
CANDIDATE = -1


def call_value(ip: Interp, fv: V, args, kwargs, node, env) -> V:
    results = []
    if fv.k & Kind.MODREF and isinstance(fv.const, str) and not fv.objs:
        return call_qualified(ip, fv.const, args, kwargs, node, env)
    objects = ip.sem.objects
    # several modules joined in one value (`self.vgg[k]` of a list whose order is not known): one of
    # them runs, so each runs on an arm of its own, and what one does (an in-place ReLU) is never
    # taken to follow what another saved in the same call, nor for certain (build.py)
    arms = ip.seq() if sum(1 for o in fv.objs if isinstance(o, ModuleObj)) > 1 else None
    candidates = in_order(fv.objs)
    if len(candidates) > 1:
        # several callees joined (a criterion chosen by a mode): one that cannot take these arguments
        # raises TypeError there, so it is not the one this call runs
        fits = [o for o in candidates if _takes(o, args, kwargs)]
        if fits:
            candidates = fits
    for i, o in enumerate(candidates):
        sem = objects.get(type(o))
        if sem is not None and sem.call is not None:
            arm = arms if isinstance(o, ModuleObj) else None
            results.append(_on_arm(ip, arm, i, sem.call, ip, o, args, kwargs, node, env))
        elif isinstance(o, FuncObj):
            results.append(call_function(ip, o, args, kwargs, node))
        elif isinstance(o, BoundMethod):
            results.append(call_function(ip, o.func, args, kwargs, node, self_v=o.recv))
        elif isinstance(o, PartialObj):
            results.append(call_value(ip, o.fn, list(o.args) + list(args), {**o.kwargs, **kwargs}, node, env))
        elif isinstance(o, ClassObj):
            results.append(instantiate(ip, o, args, kwargs, node))
        elif isinstance(o, InstanceObj):
            m = o.cls.lookup("__call__")
            if m is not None:
                results.append(call_function(ip, m, args, kwargs, node, self_v=V(Kind.INST, frozenset((o,)))))
            else:
                results.append(opaque_call(ip, None, args, kwargs, node))
        elif isinstance(o, SymObj):
            results.append(sym_call(ip, o, args, kwargs, node))
        elif isinstance(o, PIter):
            results.append(V(Kind.PARAMS, frozenset((o,))))
        elif isinstance(o, QualRef):
            # one of the names it may be (`bnb.optim.AdamW8bit if args.use_8bit else torch.optim.AdamW`);
            # what else it may be is not known
            results.append(call_qualified(ip, o.qual, args, kwargs, node, env))
    if results and fv.k & ~Kind.MODREF and any(isinstance(o, QualRef) for o in candidates):
        results.append(opaque_call(ip, fv.replace(objs=EMPTY), args, kwargs, node, outside=True))
    if not results:
        model = ip.sem.unknown_model(ip, args, kwargs, node) if not fv.objs else None
        if model is not None:
            return model
        # an unknown callable (a model from a factory the engine cannot see, a wrapper...):
        # it may add gradient from parameters the engine cannot name
        return opaque_call(ip, fv, args, kwargs, node, extra=fv, outside=True)
    return join_all(results)


def _on_arm(ip: Interp, arms: int | None, i: int, run: Callable[..., V], *how) -> V:
    """Run the call of candidate `i` of several joined modules on an arm of its own (`arms`, a branch
    key): what one does (an in-place ReLU) is never taken to follow what another saved, nor for
    certain (build.py). None: no arm, a plain call. `run(*how)` is the call."""
    if arms is None:
        return run(*how)
    mark = len(ip.st.path)
    ip.st.path.append((arms, CANDIDATE - i, len(ip.st.ctx)))
    try:
        return run(*how)
    finally:
        del ip.st.path[mark:]


def _takes(o, args, kwargs) -> bool:
    """Whether a callee can take `args` and `kwargs` without a TypeError; True when not known."""
    fn, bound = None, False
    if isinstance(o, FuncObj):
        fn = o
    elif isinstance(o, BoundMethod):
        fn, bound = o.func, not o.func.is_static
    elif isinstance(o, ModuleObj) and o.cls is not None:
        fn, bound = o.cls.lookup("forward"), True
    elif isinstance(o, InstanceObj):
        fn, bound = o.cls.lookup("__call__"), True
    if fn is None or not isinstance(fn.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return True
    if any(isinstance(a, Star) for a in args) or "**" in kwargs:
        return True
    a = fn.node.args
    positional = [p.arg for p in a.posonlyargs + a.args][1 if bound else 0 :]
    if len(args) > len(positional) and a.vararg is None:
        return False
    names = set(positional[len(args) :]) | {p.arg for p in a.kwonlyargs}
    if a.kwarg is None and any(k not in names for k in kwargs):
        return False
    required = positional[: len(positional) - len(a.defaults)]
    if any(p not in kwargs for p in required[len(args) :]):
        return False
    return all(p.arg in kwargs for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None)


def call_function(ip: Interp, fn: FuncObj, args, kwargs, node, self_v=None) -> V:
    if fn.entry is not None:
        # a @contextmanager function: nothing of its body runs until a `with` enters what it gives
        return V(Kind.CTX, frozenset((GenCtxObj(fn.entry, args, kwargs, self_v, Site(ip.st.sf, node)),)), site=node)
    over = (
        ip.st.steps > ip.st.budget
        or ip.st.steps - ip.st.root_start > ip.st.root_budget
        or (ip.st.caps and ip.st.steps > min(ip.st.caps)[0])
    )
    if ip.st.shallow and fn.scope.sf is not ip.st.entry and not _runs_admitted(fn, self_v):
        # checking one class alone: its own __init__ is what matters, not a base class's in a library
        return opaque_call(ip, None, args, kwargs, node, extra=self_v, record=None).replace(top=True)
    if len(ip.st.stack) > ip.st.budgets.call_depth or over or any(f.func is fn for f in ip.st.stack):
        if over:
            ip.st.trace.incomplete = True
            ip.st.gaps.call_cut(fn, _spent(ip), ip.st.sf, node)
        # not followed: the result is unknown, and may carry anything
        record = UnseenRec.BUDGET if over else UnseenRec.NOT_FOLLOWED
        return opaque_call(ip, None, args, kwargs, node, extra=self_v, record=record).replace(top=True)
    fn.interpreted += 1
    if _informed(args, kwargs):
        ip.st.trace.ran.add((fn.scope.sf.abspath, fn.qual))
    k = summaries.key(ip, fn, args, kwargs, self_v)
    if k is None:
        return _follow(ip, fn, args, kwargs, node, self_v)
    hit = ip.st.summaries.get(k)
    if hit is not None:
        ip.st.steps += 1
        return hit
    before = summaries.mark(ip)
    result = _follow(ip, fn, args, kwargs, node, self_v)
    summaries.keep(ip, k, before, result)
    return result


def _follow(ip: Interp, fn: FuncObj, args, kwargs, node, self_v) -> V:
    """Run the call, or reuse its run on the other arm of a branch (repeats.py)."""
    if not ip.st.path:
        return _run_function(ip, fn, args, kwargs, node, self_v)
    # under a branch: the same call analysed just before on its other arm stands for this one
    # (repeats.py); a call made under no branch has no other arm
    again = repeats.reuse(ip, fn, args, kwargs, self_v) if ip.st.last_calls else None
    if again is not None:
        return again
    ctx, path, gaps0, first = repeats.context(ip), tuple(ip.st.path), repeats.gaps(ip), len(ip.st.trace.events)
    result = _run_function(ip, fn, args, kwargs, node, self_v)
    cut = repeats.gaps(ip) != gaps0 or ip.st.trace.incomplete
    repeats.ended(ip, fn, args, kwargs, self_v, ctx, path, cut, result, first)
    return result


def _informed(args, kwargs) -> bool:
    """A call given something the engine knows (or nothing to know): what another file's analysis
    saw running it may stand for what a run of it alone on made-up inputs saw (drivers.with_drivers)."""
    if not args and not kwargs:
        return True
    return any(not isinstance(v, V) or not _blind(v) for v in args) or any(
        not isinstance(v, V) or not _blind(v) for v in kwargs.values()
    )


def _blind(v: V) -> bool:
    return v.unk and not v.objs and not v.org and not v.weak


def _run_function(ip: Interp, fn: FuncObj, args, kwargs, node, self_v) -> V:
    call_site = Site(ip.st.sf, node) if node is not fn.node else None
    env = bind_args(ip, fn, args, kwargs, self_v)
    arg_objs = set()
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, V):
            arg_objs.update(v.objs)
    frame = Frame(
        fn,
        fn.scope,
        fn.closure,
        call_site,
        frozenset(arg_objs),
        cls=fn.cls,
        self_v=self_v,
        label=fn.qual,
        cond=ip.st.cond,
    )
    saved = (ip.st.sf, ip.st.nograd, ip.st.ctx, ip.st.grad_known)
    if call_site is not None:
        ip.st.ctx = ip.st.ctx + (("call", node, fn, ip.st.sf),)
    ip.st.sf = fn.scope.sf
    if fn.nograd is not None and ip.st.nograd is None:
        ip.st.nograd = fn.nograd
    elif fn.grad_on:
        ip.st.nograd, ip.st.grad_known = None, True
    elif fn.grad_on is None and ip.st.nograd is None:
        ip.st.grad_known = False
    ip.st.stack.append(frame)
    try:
        if isinstance(fn.node, ast.Lambda):
            result = ip.eval(fn.node.body, env)
            frame.returns.append(result)
        else:
            ip.exec_block(fn.node.body, env)
    finally:
        ip.st.stack.pop()
        ip.st.sf, ip.st.nograd, ip.st.ctx, ip.st.grad_known = saved
    if frame.yields:
        lst = ListObj(join_all(frame.yields), Site(fn.scope.sf, fn.node))
        return V(Kind.LIST, frozenset((lst,)))
    if not frame.returns:
        return NONE
    out = join_all(frame.returns)
    if fn.nograd is not None and out.carries:
        out = R.cut_nograd(ip, out, fn.nograd)
    return out


def _runs_admitted(fn: FuncObj, self_v: V | None) -> bool:
    """A method of a submodule a class checked alone holds from another file of its project (its
    `__init__`, its `forward`, what they call on `self`): run, as the class's own are."""
    return self_v is not None and any(isinstance(o, ModuleObj) and o.admitted for o in self_v.objs)


def _admitted(ip: Interp, cls: ClassObj) -> bool:
    """A class checked on its own builds the modules it holds directly from other files of its
    project, one level deep (theirs stay unseen): what their forward saved for backward reaches the
    class's result, where an in-place layer of the class may change it (PSPNet's in-place dropout
    after another file's conv-BN-ReLU block). Libraries' classes stay unseen."""
    return len(ip.st.init_stack) == 1 and _in_project(ip, cls)


def _in_project(ip: Interp, cls: ClassObj) -> bool:
    """`cls` is defined in the checked file's project, not in an installed library."""
    path = cls.scope.sf.abspath
    return path.startswith(_project_top(ip.st.entry.abspath)) and not installed(path)


def _project_top(path: str) -> str:
    """The folder holding the topmost package around `path` (its own folder outside packages)."""
    d = os.path.dirname(path)
    while os.path.isfile(os.path.join(d, "__init__.py")) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    return d + os.sep


def _spent(ip: Interp) -> str:
    """Which budget (a Budgets field) stopped a call: the file's, the root's, an __init__'s."""
    st = ip.st
    if st.steps > st.budget:
        return "statements"
    if st.steps - st.root_start > st.root_budget:
        return "script" if st.root_index == 1 else "function"
    return min(st.caps)[1] if st.caps else "statements"


def _spread(args) -> list:
    """The arguments with `*lst` replaced by the list's elements when it is known element by element
    (`args = [loss, best, x]; f(*args)`): each goes to its own parameter, not all of them to each."""
    out: list = []
    for g in args:
        if isinstance(g, Star):
            v = g.value
            lists = v.of(ListObj)
            if v.items is not None and not v.objs:
                out.extend(v.items)
                continue
            if len(lists) == 1 and v.objs == {lists[0]} and lists[0].exact and lists[0].elems is not None:
                out.extend(lists[0].elems)
                continue
        out.append(g)
    return out


def bind_args(ip: Interp, fn: FuncObj, args, kwargs, self_v) -> dict:
    node = fn.node
    a = node.args
    env: dict = {}
    positional = [p.arg for p in a.posonlyargs + a.args]
    defaults, kw_defaults = ip.defaults_of(fn)
    given = _spread(args)
    if self_v is not None and positional:
        env[positional[0]] = self_v
        positional = positional[1:]
    star_rest = None
    for i, name in enumerate(positional):
        if i < len(given):
            g = given[i]
            if isinstance(g, Star):
                env[name] = ip.iter_value(g.value)
                star_rest = g.value
                for rest in positional[i + 1 :]:
                    if rest not in kwargs:
                        env[rest] = ip.iter_value(g.value)
                break
            env[name] = g
        elif name in kwargs:
            env[name] = kwargs[name]
        else:
            j = i - (len(positional) - len(defaults))
            env[name] = defaults[j] if 0 <= j < len(defaults) else UNKNOWN
    for name in positional:
        if name in kwargs:
            env[name] = kwargs[name]
    if a.vararg is not None:
        extra = list(given[len(positional) :])
        if any(isinstance(g, Star) for g in extra) or star_rest is not None:
            elem = join_all(
                [ip.iter_value(g.value) if isinstance(g, Star) else g for g in extra]
                + ([ip.iter_value(star_rest)] if star_rest is not None else [])
            )
            lst = ListObj(elem, None)
            env[a.vararg.arg] = V(Kind.TUPLE, frozenset((lst,)))
        else:
            env[a.vararg.arg] = make_tuple(extra, None)
    for p, d in zip(a.kwonlyargs, kw_defaults):
        if p.arg in kwargs:
            env[p.arg] = kwargs[p.arg]
        else:
            env[p.arg] = d if d is not None else UNKNOWN
    if a.kwarg is not None:
        d = DictObj(None)
        known = set(positional) | {p.arg for p in a.kwonlyargs}
        for k, v in kwargs.items():
            if k not in known and k != "**":
                d.set(k, v)
        env[a.kwarg.arg] = V(Kind.DICT, frozenset((d,)))
    return env


def _touches_grads(fn_node) -> bool:
    """A step() that may clear or rewrite the gradients (`p.grad = None`, `p.grad.zero_()`, a call
    of zero_grad): not what torch's optimizers do."""
    for n in ast.walk(fn_node):
        if isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            f = n.func
            if f.attr == "zero_grad" or (
                (f.attr in T.GRAD_CLEARING or f.attr in T.GRAD_FILLING or f.attr in T.REFILLS)
                and isinstance(f.value, ast.Attribute)
                and f.value.attr == "grad"
            ):
                return True
    return False


def _made_by_new(ip: Interp, cls: ClassObj, args, kwargs, node) -> V | None:
    """A class of the project whose own `__new__` returns another object (a factory class:
    `class Network: def __new__(cls, name, *a, **k): return registry[name](*a, **k)`, JORLDY's):
    what `__new__` returns is the call's value, and no `__init__` of `cls` runs. None when it has
    no `__new__`, or returns an instance of `cls` (`super().__new__(cls)`) or nothing known."""
    new = cls.lookup("__new__")
    if not isinstance(new, FuncObj) or isinstance(new.node, ast.Lambda) or cls.is_module:
        return None
    out = call_function(ip, new, [V(Kind.CLASS, frozenset((cls,)))] + list(args), kwargs, node)
    made = [o for o in out.objs if isinstance(o, (ModuleObj, InstanceObj, OptimObj))]
    if not made or any(isinstance(o, InstanceObj) and cls in o.cls.mro() for o in made):
        return None
    return out


# the bases that make a project class's instances dicts (MeterBuffer(defaultdict), a Config(dict))
_DICT_BASES = frozenset(
    ("builtins.dict", "collections.defaultdict", "collections.OrderedDict", "collections.Counter", "typing.Dict")
)


def _library_bases(cls: ClassObj) -> set[str]:
    """The qualified names of the bases a class and its project bases take from libraries."""
    return {b for c in cls.mro() for b in c.bases if isinstance(b, str)}


def _dict_based(cls: ClassObj) -> bool:
    return bool(_library_bases(cls) & _DICT_BASES)


def instantiate(ip: Interp, cls: ClassObj, args, kwargs, node, label=None) -> V:
    site = Site(ip.st.sf, node)
    cls.instantiated += 1
    if cls.is_optimizer:
        made = ip.sem.new_optimizer(ip, cls.name, args, kwargs, node, None)
        step = cls.lookup("step")
        if step is not None and _touches_grads(step.node):
            for o in made.of(OptimObj):
                if o.qual == cls.name:  # not the optimizer a wrapper (Lookahead) was given
                    o.assumed = (
                        f"`{cls.name}` defines its own `step()`, which writes `.grad` or clears gradients: the "
                        "engine models it as the torch optimizer it derives from"
                    )
        return made
    if cls.is_scheduler and cls.lookup("step") is None:
        # a schedule of the project's own over an optimizer it is given, wherever in its arguments
        # (its get_lr() is torch's business to call; a step() of its own may do anything)
        given = [a for a in list(args) + list(kwargs.values()) if isinstance(a, V)]
        opt = next((a for a in given if a.of(OptimObj)), None)
        if opt is not None:
            return ip.sem.new_scheduler(ip, cls.name, [opt], {}, node, None)
    made = _made_by_new(ip, cls, args, kwargs, node)
    if made is not None:
        return made
    if cls.is_module:
        m = ModuleObj(label or f"<{cls.name}>", site, ip.seq(), cls=cls)
        m.opaque = cls.opaque_base
        if m.opaque:
            m.opaque_unit = Unit(Unit.OPAQUE, f"{m.label}.<params>", site, m.seq, count=None)
            m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
        recv = module_value(m)
    else:
        if ip.library is not None and _is_record(cls):
            # a record of outputs (a dataclass, ModelOutput): every field is part of the value
            f = flow_of(*[a for a in list(args) + [v for k, v in kwargs.items() if k != "**"] if isinstance(a, V)])
            return f.value(Kind.UNKNOWN, site=node)
        inst = InstanceObj(cls, label or f"<{cls.name}>", site)
        if _dict_based(cls):
            inst.store = DictObj(site)
        recv = V(Kind.INST, frozenset((inst,)))
    init = cls.lookup("__init__")
    if cls.is_module and ip.st.shallow and not ip.st.init_stack and cls.scope.sf is not ip.st.entry:
        # built inside a forward run alone, from another file of the project (matgl's EdgeSet2Set):
        # its `__init__` runs, so that the layers it makes at every call are seen (GA108)
        m.admitted = ip.st.stack[-1].runs("forward") and _in_project(ip, cls)
    elif cls.is_module and ip.st.shallow and len(ip.st.init_stack) >= 1 and cls.scope.sf is not ip.st.entry:
        if _admitted(ip, cls):
            m.admitted = True
        else:
            # a submodule of the class under check from another file: what it holds does not matter
            # here, unless its class can be read to hold nothing at all (then nothing stands for unknown
            # parameters); one of the same file is built, and runs on what its owner gives it
            m.opaque = True
            if m.opaque_unit is None and not holds_no_state(cls):
                m.opaque_unit = Unit(Unit.OPAQUE, "<params>", site, m.seq, count=None)
                m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
            return recv
    if init is not None:
        if cls.is_module:
            ip.st.init_stack.append(recv.objs and next(iter(recv.objs)))
            if ip.library is not None:
                ip.library.init_cond[m.oid] = ip.st.cond
            m.in_init = True
        # a helper object's set-up (a trainer, an accelerator, a config) may run deep into a
        # library; what the training step needs from it is seldom that deep
        b = ip.st.budgets
        ip.st.caps.append(
            (ip.st.steps + b.init, "init") if not cls.is_module else (ip.st.steps + b.module_init, "module_init")
        )
        try:
            call_function(ip, init, args, kwargs, node, self_v=recv)
        finally:
            ip.st.caps.pop()
            if cls.is_module:
                m.in_init = False
                ip.st.init_stack.pop()
                ip.sem.after_init(ip, m)
    elif cls.is_module:
        ip.sem.after_init(ip, m)
    elif names := _dataclass_fields(cls):
        # the __init__ @dataclass writes: each field from its argument (the defaults stay class
        # attributes), then __post_init__
        starred = next((i for i, a in enumerate(args) if isinstance(a, Star)), len(args))
        for name, value in list(zip(names, args[:starred])) + [(k, v) for k, v in kwargs.items() if k in names]:
            if isinstance(value, V):
                inst.attrs[name] = value
                ip.name_objects(value, name)
        spread = kwargs.get("**")
        if starred < len(args) or spread is not None:
            # `Config(**yaml.safe_load(fp))`, `Config(*row)`: the fields not given by name may be given
            # by what is spread, so their class defaults (litgpt's `lora_r = 0`) say nothing of them
            by_key = _spread_keys(spread) if starred == len(args) else None
            for name in names[starred:]:
                if name in inst.attrs:
                    continue
                if by_key is None:
                    inst.attrs[name] = V(Kind.UNKNOWN, site=node)
                elif name in by_key:
                    inst.attrs[name] = by_key[name]
        post = cls.lookup("__post_init__")
        if post is not None:
            call_function(ip, post, [], {}, node, self_v=recv)
    if not cls.is_module:
        for hook in ip.sem.on_instance:
            hook(ip, cls, recv, args, kwargs)
    return recv


def opaque_call(
    ip: Interp, fv: V | None, args, kwargs, node, extra: V | None = None, outside=False, record: str | None = "call"
) -> V:
    """A call the engine does not follow: its result may carry what went in (weakly), and its
    content is unknown. `outside`: code the engine cannot see at all (a library); it may run a
    model of its own, but only tensors, modules or gradient going in are evidence of that
    (`parser.parse_args()`, `env.step(a)` return values that carry no gradient). `record`: the
    kind of unseen code it is (trace.UnseenRec), noted when it is handed modules, leaves or
    optimizers; None for a forward the engine stands in for (it reads parameters, never sets them)."""
    if record is not None:
        recording.note_unseen(ip, record, node, list(args) + [v for k, v in kwargs.items() if k != "**"] + [extra])
    f = Flow()
    evidence = False
    scaled = False
    handed: list[FuncObj] = []
    for v in list(args) + [v for k, v in kwargs.items() if k != "**"] + ([extra] if extra else []):
        if isinstance(v, Star):
            v = v.value
        if not isinstance(v, V):
            continue
        f.add(v)
        scaled = scaled or bool(v.marks & Mark.SCALED)
        for o in v.objs:
            if isinstance(o, OptimObj):
                o.escaped = True
            elif isinstance(o, (FuncObj, BoundMethod)):
                _escape_reads(ip, o)
                if record is not None and isinstance(o, FuncObj):
                    handed.append(o)
            elif isinstance(o, ModuleObj):
                f.weak = f.weak | o.unit_set()  # kept on the module: a joined receiver asks each of many
                evidence = True
            elif isinstance(o, SymObj):
                f.weak = f.weak | {sym_unit(ip, o)}
            elif isinstance(o, PIter):
                f.weak = f.weak | o.units
                evidence = True
    for fn in handed:
        _run_handed(ip, fn, node)
    weak = f.weak | f.org
    evidence = evidence or f.tensor or f.carries
    k = Kind.UNKNOWN | (Kind.TENSOR if f.tensor else 0)
    # what it saved for backward is not known: no graph identity is claimed for its result
    out = V(
        k,
        org=EMPTY,
        weak=weak,
        top=f.top or (outside and evidence),
        cuts=f.cuts,
        site=node,
        unk=Site(ip.st.sf, node) if node is not None else True,
        terms=f.terms,
    )
    if ip.st.shallow and f.saves:
        # a unit run on its own (its claims are suspicious): a helper of another file given a
        # tensor most likely computes from it (openfold's `chunk_layer(self.mha, {"q_x": x, ...})`),
        # so what that tensor's graph saved stays in the result's graph
        out = out.replace(saves=f.saves)
    if scaled:
        # what unseen code gives back for a loss divided by its micro-batch count (apex's
        # `amp.scale_loss(loss / n, opt)`, a gather) is not known to undo that division
        out = out.replace(marks=out.marks | Mark.SCALED)
    if ip.st.nograd is not None and out.carries:
        out = R.cut_nograd(ip, out, ip.st.nograd)
    return out


def _run_handed(ip: Interp, fn: FuncObj, node) -> None:
    """A closure with training code handed to unseen code that calls it (MultiBench's
    `memory_usage(proc=trainprocess)`, a profiler, a retry or timing wrapper) and not run yet: run it
    here, once, on unknown arguments, with the names it reads as they are now. (A direct call on
    another arm, `else: trainprocess()`, runs it again there.)"""
    if fn.interpreted or not fn.closure or isinstance(fn.node, ast.Lambda) or fn.scope is None:
        return
    sf = fn.scope.sf
    if not mentions(sf, fn.node, TRAINING_WORDS):
        return
    args, kwargs = ip.symbolic_args(fn, False, ip.sym_value, Site(sf, fn.node))
    call_function(ip, fn, args, kwargs, node)


def _escape_reads(ip: Interp, o) -> None:
    """A function handed to unseen code (`Engine(process_batch)`, a callback list) may be run by it,
    with the names it reads bound as they are now: the optimizers among them may be stepped or
    cleared there (a stage-one optimizer used only by a handler given to a training engine)."""
    fn = o.func if isinstance(o, BoundMethod) else o
    if not isinstance(fn, FuncObj):
        return
    found: list = []
    if isinstance(o, BoundMethod) and isinstance(o.recv, V):
        for r in o.recv.objs:
            if isinstance(r, InstanceObj):
                found.extend(r.attrs.values())  # `self.optimizer` of a bound handler
    g = fn.scope.globals if fn.scope is not None else {}
    live = ip.st.live_globals.get(id(g)) or {}  # bound so far by a module-level loop or `if` arm
    for name in _loaded_names(fn.node):
        for env in fn.closure or ():
            if isinstance(env, dict) and name in env:
                found.append(env[name])
                break
        else:
            v = live.get(name, g.get(name))
            if v is not None:
                found.append(v)
    for v in found:
        if isinstance(v, V):
            for x in v.objs:
                if isinstance(x, OptimObj):
                    x.escaped = True


def _loaded_names(node) -> frozenset:
    """The names a function's code reads, once per node."""
    names = getattr(node, "_gradaudit_loads", None)
    if names is None:
        names = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
        node._gradaudit_loads = names
    return names


def sym_unit(ip: Interp, o: SymObj) -> Unit:
    if o.unit is None:
        o.unit = Unit(Unit.OPAQUE, o.label, o.site, o.seq, count=None)
        o.unit.arg = True
    return o.unit


def sym_call(ip: Interp, o: SymObj, args, kwargs, node) -> V:
    out = opaque_call(ip, None, args, kwargs, node)
    u = sym_unit(ip, o)
    if ip.st.nograd is not None:
        return out
    return out.replace(weak=out.weak | {u}, k=out.k | Kind.TENSOR)


def get_attr(ip: Interp, recv: V, attr: str, node, env) -> V:
    if recv.k & Kind.MODREF and not recv.objs and isinstance(recv.const, str):
        return V(Kind.MODREF, const=T.strip_torch_alias(f"{recv.const}.{attr}"))
    if recv.items is not None and attr in T.VALUES_INDICES_FIELDS and len(recv.items) == 2:
        return recv.items[T.VALUES_INDICES_FIELDS.index(attr)]
    if recv.marks & Mark.PACKED and attr in T.PACKED_FIELDS:
        # a PackedSequence's field: `data` is the packed tensor with its graph, the rest are indices
        if attr == "data":
            return recv.replace(marks=recv.marks & ~Mark.PACKED, site=node)
        return V(Kind.TENSOR, site=node)
    results = []
    tensorish = False
    objects = ip.sem.objects
    for o in in_order(recv.objs):
        sem = objects.get(type(o))
        if sem is not None and sem.attr is not None:
            results.append(sem.attr(ip, o, attr, node))
        elif isinstance(o, InstanceObj):
            if attr in o.attrs:
                results.append(o.attrs[attr])
            else:
                results.append(class_attr(ip, o.cls, attr, V(Kind.INST, frozenset((o,))), node))
        elif isinstance(o, ClassObj):
            results.append(class_attr(ip, o, attr, None, node))
        elif isinstance(o, SymObj):
            child = o.attrs.get(attr)
            if child is None:
                if attr in ("grad", "data", "shape", "dtype", "device", "requires_grad", "is_leaf", "T"):
                    child = UNKNOWN
                else:
                    child = V(Kind.UNKNOWN, frozenset((SymObj(f"{o.label}.{attr}", o.site, o.seq),)))
                o.attrs[attr] = child
            results.append(child)
        elif isinstance(o, STORAGE):
            tensorish = True
        elif hasattr(o, "globals"):  # an imported project module
            v = ip.lookup_global(o.globals, attr)
            if v is None:
                sub = ip.st.program.submodule(o.sf.abspath, attr)
                v = ip.scope_value(sub, f"{o.name}.{attr}") if sub else UNKNOWN
            results.append(v)
    if tensorish or (recv.k & Kind.TENSOR and not results) or (attr == "data" and not results and recv.carries):
        # `.data` of a value the engine did not see being made: whatever it is, a tensor's view cut from its graph
        results.append(ip.sem.tensors.attr(ip, recv, attr, node))
    if (
        results
        and recv.k & Kind.UNKNOWN
        and (recv.carries or recv.cuts)
        and attr not in ("data", "grad")  # `.grad` of a tensor is a gradient, without the forward's graph
        and attr not in T.METADATA_ATTRIBUTES  # a size or a dtype never carries gradient
    ):
        # partly unknown: what the unknown part carried stays with its attributes
        results.append(
            V(
                Kind.UNKNOWN,
                EMPTY,
                recv.org,
                recv.weak,
                recv.top,
                recv.cuts,
                recv.saves,
                site=node,
                risks=recv.risks,
            )
        )
    if not results:
        if recv.k & (Kind.NUMBER | Kind.STR | Kind.NONE) and not recv.carries:
            return UNKNOWN
        if attr in ("shape", "ndim"):
            return V(Kind.NUMBER | Kind.UNKNOWN, site=node, unk=False)  # an unseen tensor's sizes
        # unknown object: keep what it carried (outputs.loss, outputs.logits); a network's output
        # object's logits are its last layer's output, as the network's output is
        return V(
            Kind.UNKNOWN | (recv.k & Kind.TENSOR),
            EMPTY,
            recv.org,
            recv.weak,
            recv.top,
            recv.cuts,
            recv.saves,
            site=node,
            risks=recv.risks,
            marks=recv.marks & (Mark.LOGITS | Mark.NET_OUT) if _LOGITS_FIELD.search(attr) else 0,
        )
    return join_all(results)


_LOGITS_FIELD = re.compile(r"(?:^|_)logits$")


def class_attr(ip: Interp, cls: ClassObj, attr, self_v, node) -> V:
    m = cls.lookup(attr)
    if m is not None:
        prop = cls.lookup_attr(attr)
        if prop is not None and prop.const == "property" and self_v is not None:
            return call_function(ip, m, [], {}, node, self_v=self_v)
        if self_v is None or m.is_static:
            return V(Kind.FUNC, frozenset((m,)))
        return V(Kind.FUNC, frozenset((BoundMethod(m, self_v),)))
    v = cls.lookup_attr(attr)
    if v is not None:
        return v
    for inherited in ip.sem.inherited_attr:
        v = inherited(ip, cls, attr, node)
        if v is not None:
            return v
    return UNKNOWN


def set_attr(ip: Interp, recv: V, attr: str, value: V, stmt, target, env):
    if value.saves and any(recording.outlives_iteration(ip, o) for o in recv.objs):
        recording.note_carry(ip, value, stmt)  # `self.centers = m * self.centers + ...` across iterations
        for o in in_order(recv.objs):
            recording.note_graph_write(ip, o, value)
    objects = ip.sem.objects
    settings.note_store(ip, recv, attr, value, stmt, env)
    for o in in_order(recv.objs):
        sem = objects.get(type(o))
        if sem is not None and sem.setattr is not None:
            sem.setattr(ip, o, attr, value, stmt, target)
            if isinstance(o, ModuleObj):
                # `self.meta_optim = Adam(...)` in a module's method: the optimizer is named for
                # messages as on any object (its modules are named by registration instead)
                ip.name_objects(
                    value.replace(objs=frozenset(x for x in value.objs if isinstance(x, OptimObj))),
                    ip.st.sf.segment(target) or attr,
                )
        elif isinstance(o, InstanceObj):
            o.attrs[attr] = recording.stored(ip, o, attr, o.attrs.get(attr), value, len(recv.objs) > 1)
            ip.name_objects(value, ip.st.sf.segment(target) or attr)  # `self.optimizer`
        elif isinstance(o, SymObj):
            o.attrs[attr] = value
        elif isinstance(o, ClassObj):
            o.class_attrs[attr] = value
        elif hasattr(o, "globals"):
            o.globals[attr] = value
    if attr == "data":
        # `p.data = ...` replaces what the parameter holds: an update when it happens while training
        for u in recv.objs:
            if isinstance(u, Unit):
                ip.st.trace.writes.append((u, Site(ip.st.sf, stmt), ip.st.ctx))
                u.version += 1
                u.bumps.append((u.version, Site(ip.st.sf, stmt), tuple(ip.st.path), ()))
    if attr == "requires_grad" and (recv.k & Kind.TENSOR or any(isinstance(o, STORAGE) for o in recv.objs)):
        flag = value.const if isinstance(value.const, bool) else None
        ip.sem.tensors.set_requires_grad(ip, recv, flag, stmt, target.value, env, stmt)
    elif attr == "grad" and (value.k == Kind.NONE or _zeros(getattr(stmt, "value", None))):
        # `p.grad = None`, or zeros (`torch.zeros_like(p)`, `0.0 * p.grad`): the gradient is cleared
        units = [o for o in recv.objs if isinstance(o, Unit)]
        recording.event(ip, EventKind.ZERO_GRAD, stmt, frozenset(units), detail="grad=None", units=frozenset(units))
    elif attr == "grad" and value.k & Kind.TENSOR:
        units = [o for o in recv.objs if isinstance(o, Unit)]
        if any(c[0] == "loop" for c in ip.st.ctx):
            ip.st.trace.grad_sets.extend(units)  # replaced each iteration: nothing accumulates across them
        if not _zeros(getattr(stmt, "value", None)):
            # `p.grad = g`: a gradient given by hand (not `torch.zeros_like(p)`, an empty one to add into)
            ip.st.trace.grad_writes.extend(units)


def _zeros(node) -> bool:
    """`torch.zeros_like(p)`, `0 * g`, `g * 0.0`: an expression whose value is all zeros."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return any(
            isinstance(side, ast.Constant) and type(side.value) in (int, float) and side.value == 0
            for side in (node.left, node.right)
        )
    f = node.func if isinstance(node, ast.Call) else None
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in T.ZERO_FACTORIES


def get_item(ip: Interp, recv: V, index: V, node, env) -> V:
    if recv.items is not None:
        c = index.const
        if isinstance(c, int) and not isinstance(c, bool) and -len(recv.items) <= c < len(recv.items):
            return recv.items[c]
        if (index.k & Kind.NUMBER and c is NOCONST) or isinstance(c, int):
            return join_all(recv.items) if recv.items else UNKNOWN
        return join_all(recv.items) if recv.items else UNKNOWN
    results = []
    tensorish = False
    objects = ip.sem.objects
    for o in in_order(recv.objs):
        if isinstance(o, InstanceObj):
            o = o.items_for("__getitem__")
        sem = objects.get(type(o))
        if sem is not None and sem.getitem is not None:
            results.append(sem.getitem(ip, o, index, node))
        elif isinstance(o, ListObj) and isinstance(getattr(node, "slice", None), ast.Slice):
            results.append(containers.slice_list(ip, o, node.slice, node, env))  # `layers[:-1]`: a list
        elif isinstance(o, ListObj):
            # a list nothing was seen put in: filled where the engine did not look
            content = o.content
            if content is not None and isinstance(index.const, int) and not isinstance(index.const, bool):
                content = _position(o, index.const, content)
            results.append(content if content is not None else V(Kind.UNKNOWN, site=node, unk=Site(ip.st.sf, node)))
        elif isinstance(o, DictObj):
            key = index.const if isinstance(index.const, (str, int)) else None
            if o.default is not None and (key not in o.keys if key is not None else o.rest is None):
                # a defaultdict's missing key: the factory makes its value (`groups[k].append(p)`
                # fills that list); all unknown keys share one made value, which a known key may
                # be (`groups["decay"]` after `groups["decay" if d else "no_decay"].append(p)`)
                made = call_value(ip, o.default, [], {}, node, env)
                o.set(key, join(made, o.rest) if key is not None and o.rest is not None else made)
            v = o.get(key)
            results.append(v if v is not None else V(Kind.UNKNOWN, site=node, unk=Site(ip.st.sf, node)))
        elif isinstance(o, STORAGE):
            tensorish = True
        elif isinstance(o, PIter):
            results.append(V(Kind.TENSOR, frozenset(o.units), org=frozenset(o.units)))
    if tensorish or (recv.k & Kind.TENSOR and not results):
        key = "slice" if isinstance(node.slice, ast.Slice) else index.const
        results.append(ip.sem.tensors.getitem(ip, recv, key, node, index))
    if recv.k & Kind.ARRAY and not results:
        results.append(recv.replace(site=node, items=None))
    if not results:
        # an element of a shape (`x.shape[0]`) is a number too
        number = recv.k & Kind.NUMBER if not recv.k & Kind.TENSOR and not recv.carries else 0
        return V(
            Kind.UNKNOWN | (recv.k & Kind.TENSOR) | number,
            EMPTY,
            recv.org,
            recv.weak,
            recv.top,
            recv.cuts,
            recv.saves,
            site=node,
            risks=recv.risks,
        )
    return join_all(results)


def _position(o: ListObj, i: int, content: V) -> V:
    """`batch[3]` of a list whose elements the engine keeps joined (`tuple(t.to(dev) for t in batch)`):
    data tensors at distinct positions are distinct tensors (the labels are not the input ids, so a
    `labels.clamp_()` changes nothing an embedding saved of the ids); each position reads a storage
    of its own, the same at every read of it. Tensors with gradient keep their identity."""
    if content.carries:
        return content
    data = [s for s in content.objs if type(s) is TensorObj and s.base is None and s.nonleaf_of is None]
    if not data:
        return content
    if o.positions is None:
        o.positions = {}
    swap = {}
    for s in data:
        own = o.positions.get((i, s))
        if own is None:
            own = o.positions[(i, s)] = TensorObj(s.site)
            # what is known of the element's values (a mask, a count of one) holds at each position
            own.compared, own.gate, own.counts = s.compared, s.gate, s.counts
            own.groups, own.row_gate, own.nan_rows = s.groups, s.row_gate, s.nan_rows
        swap[s] = own
    return content.replace(objs=frozenset(swap.get(x, x) for x in content.objs))


def set_item(ip: Interp, recv: V, index: V, value: V, stmt, target, env):
    objects = ip.sem.objects
    for o in in_order(recv.objs):
        if isinstance(o, InstanceObj):
            o = o.items_for("__setitem__")
        sem = objects.get(type(o))
        if sem is not None and sem.setitem is not None:
            sem.setitem(ip, o, index, value, stmt, target, env)
        elif isinstance(o, ListObj):
            if o.content is not None:
                # `lst[i] = v` replaces an element the engine keeps joined with the others: the graph
                # of the one replaced is no longer certainly reachable through the list (unless the
                # new element keeps it: `running[0] += loss` builds on the old one)
                ip.st.trace.maybe_cleared |= o.content.saves - value.saves
            i = index.const
            known = isinstance(i, int) and not isinstance(i, bool)
            if o.exact and o.elems and known and -len(o.elems) <= i < len(o.elems):
                # a known position of a list known element by element (`rep[0] = nn.ReLU()`): that
                # element is replaced (joined with the old one under a condition), the order kept
                pos = i % len(o.elems)
                o.elems[pos] = join(o.elems[pos], value) if ip.st.cond else value
                o.content = join(o.content, value)
            else:
                o.exact = False
                o.add(value)
        elif isinstance(o, DictObj):
            loops = ip.st.stack[-1].loops
            if (
                loops
                and isinstance(target, ast.Subscript)
                and recording.outlives_iteration(ip, o)
                and varies(target.slice, loops[-1]["node"])
                and attr_key(target.value) not in rebound(loops[-1]["node"])
            ):
                # `step_loss_log[step] = loss`: a new key each iteration, in a dict the loop keeps
                value = recording.note_accumulation(ip, value, stmt, outlives=recording.outlived(ip, (o,)))
            key = index.const if isinstance(index.const, (str, int)) else None
            old = o.get(key)
            if old is not None and (key is None or ip.st.cond):
                # a weak update (an unknown key, or under a condition) keeps the old value joined with
                # the new one; at run time the store usually replaced it (`skips[i]["tensor"] = h`
                # each forward): its graph is no longer certainly reachable
                ip.st.trace.maybe_cleared |= old.saves - value.saves
            if key is None or key in o.keys:
                o.set(key, value if key is None else join(o.keys.get(key), value) if ip.st.cond else value)
            else:
                o.set(key, value)
            msem = objects.get(type(o.modules_of))
            if msem is not None and msem.setattr is not None and isinstance(key, str):
                # `model._modules["fc"] = head`: the module's child is replaced
                msem.setattr(ip, o.modules_of, key, value, stmt, target)
    if recv.k & Kind.TENSOR or any(isinstance(o, STORAGE) for o in recv.objs):
        out = ip.sem.tensors.inplace(ip, recv, value, stmt, stmt, op="setitem", target_node=target.value)
        if (
            isinstance(target.value, ast.Name)
            and env is not None
            and target.value.id in env
            and value.carries
            and any(isinstance(o, STORAGE) for o in recv.objs)
        ):
            # `sim[j] = f(embeds)`: the tensor now carries what was written into it (a value the
            # engine did not see made may be a list, `feats[i] = conv(feats[i])`: it does not
            # become the tensor written into it)
            env[target.value.id] = out
        if isinstance(target.value, ast.Name) and env is not None and _zeros_replaced(target, value):
            # `stds[stds == 0] = 1`: no element is 0 any more, so no row is the zero vector either
            # (SGFormer's `qs[qs == 0] = epsilon` before `qs / norm(qs, dim=-1)`)
            cur = env.get(target.value.id)
            if isinstance(cur, V):
                env[target.value.id] = cur.replace(marks=cur.marks & ~_MAY_BE_ZERO, facts=cur.facts | Fact.NONZERO)


# the marks that say a tensor may hold an exact 0 (torch/numerics.py reads them)
_MAY_BE_ZERO = Mark.ZERO | Mark.PROB | Mark.SIGM | Mark.SQUARES | Mark.SELF


def _zeros_replaced(target: ast.Subscript, value: V) -> bool:
    """`a[a == 0] = v` where `v` is a non-zero number, or a tensor no mark says may hold a 0; or
    `a[a < c] = v` (c > 0), `a[a <= c] = v` (c >= 0) with a number v > 0: every element is then >=
    min(c, v) or > c."""
    test = target.slice
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and isinstance(bound := test.comparators[0].value, (int, float))
        and not isinstance(bound, bool)
        and ast.dump(test.left) == ast.dump(target.value)
    ):
        return False
    c = value.const
    number = isinstance(c, (int, float)) and not isinstance(c, bool)
    op = test.ops[0]
    if isinstance(op, (ast.Lt, ast.LtE)):
        return number and c > 0 and (bound > 0 or (bound == 0 and isinstance(op, ast.LtE)))
    if not isinstance(op, ast.Eq) or bound != 0:
        return False
    if number:
        return c != 0
    return bool(value.k & Kind.TENSOR) and not value.marks & _MAY_BE_ZERO and c is NOCONST


def call_qualified(ip: Interp, qual: str, args, kwargs, node, env) -> V:
    """A call of a name from outside the project (`torch.nn.Linear`, `F.relu`, `timm.create_model`,
    `len`): the handlers the semantics tables hold for it, in order, until one answers."""
    qual = T.strip_torch_alias(qual)
    for handler in ip.sem.calls.handlers(qual):
        out = handler(ip, qual, args, kwargs, node, env)
        if out is not None:
            return out
    return opaque_call(ip, None, args, kwargs, node)


def call_method(ip: Interp, recv: V, name, args, kwargs, node, env) -> V:
    results = []
    tensorish = False
    objects = ip.sem.objects
    # `self.encoder.relu(x)` of an encoder that is one of several modules: one of them runs, each
    # on an arm of its own (as call_value does for a joined module called directly)
    arms = ip.seq() if sum(1 for o in recv.objs if isinstance(o, ModuleObj)) > 1 else None
    for i, o in enumerate(in_order(recv.objs)):
        sem = objects.get(type(o))
        if sem is not None and sem.method is not None:
            arm = arms if isinstance(o, ModuleObj) else None
            results.append(_on_arm(ip, arm, i, sem.method, ip, o, name, args, kwargs, node, env, recv))
        elif isinstance(o, InstanceObj):
            m = o.cls.lookup(name)
            fw = _instance_method(ip, o, name, args, kwargs, node) if m is None else None
            if fw is not None:
                results.append(fw)
            elif m is not None:
                inst = V(Kind.INST, frozenset((o,)))
                self_v = None if m.is_static else V(Kind.CLASS, frozenset((o.cls,))) if m.is_classmethod else inst
                results.append(call_function(ip, m, args, kwargs, node, self_v=self_v))
            elif name in o.attrs:
                results.append(call_value(ip, o.attrs[name], args, kwargs, node, env))
            elif o.store is not None:
                results.append(containers.dict_method(ip, o.store, name, args, kwargs, node))
            else:
                results.append(unknown_method(ip, recv, name, args, kwargs, node))
        elif isinstance(o, ClassObj):
            m = o.lookup(name)
            if m is not None:
                self_v = V(Kind.CLASS, frozenset((o,))) if m.is_classmethod else None
                results.append(call_function(ip, m, args, kwargs, node, self_v=self_v))
            elif (got := class_attr(ip, o, name, None, node)) is not UNKNOWN and got.k & Kind.FUNC:
                results.append(call_value(ip, got, args, kwargs, node, env))
            else:
                results.append(opaque_call(ip, None, args, kwargs, node))
        elif isinstance(o, SuperObj):
            results.append(super_method(ip, o, name, args, kwargs, node, env))
        elif isinstance(o, SymObj):
            results.append(sym_method(ip, o, name, args, kwargs, node, recv))
        elif isinstance(o, ListObj):
            results.append(containers.list_method(ip, o, name, args, kwargs, node))
        elif isinstance(o, DictObj):
            results.append(containers.dict_method(ip, o, name, args, kwargs, node))
        elif isinstance(o, (FuncObj, BoundMethod)):
            if name in ("__call__",):
                results.append(call_value(ip, V(Kind.FUNC, frozenset((o,))), args, kwargs, node, env))
            else:
                results.append(UNKNOWN)
        elif isinstance(o, STORAGE):
            tensorish = True
        elif isinstance(o, PIter):
            pass
        elif hasattr(o, "globals"):
            fv = ip.lookup_global(o.globals, name)
            if fv is not None:
                results.append(call_value(ip, fv, args, kwargs, node, env))
            else:
                results.append(opaque_call(ip, None, args, kwargs, node))
    if tensorish and T.no_tensor_has(name):
        # `self.mask.items()` where mask is a dict of Parameters on one path and a Parameter on
        # another: no tensor has `items`, so the tensor part raises there and gives nothing
        # (a value seen only as a tensor: tensors.tensor_method says what such a method gives)
        tensorish = not results
    as_tensor = tensorish or (not results and bool(recv.k & (Kind.TENSOR | Kind.PARAMS)))
    if as_tensor:
        results.append(ip.sem.tensors.method(ip, recv, name, args, kwargs, node, env))
    if (
        results
        and recv.k & Kind.UNKNOWN
        and not recv.of(SymObj)
        and (recv.carries or recv.cuts)
        and not (as_tensor and name == "backward")  # one backward() of the whole value, not one per part
    ):
        results.append(unknown_method(ip, recv.replace(objs=EMPTY), name, args, kwargs, node))
    if not results:
        if recv.k & Kind.ARRAY:
            if name == "item" or name == "tolist":
                return V(Kind.NUMBER, cuts=recv.cuts, site=node)
            return recv.replace(site=node, items=None, const=NOCONST)
        if recv.k & Kind.STR:
            return V(Kind.STR, site=node)
        return unknown_method(ip, recv, name, args, kwargs, node)
    out = join_all(results)
    if not out.objs and (out.k & Kind.UNKNOWN or out.const is None) and ip.sem.unknown_result and recv.of(InstanceObj):
        # (None: `self._obj_map.get(name)` of a dict nothing was seen put in, the decorators that
        # fill it not run)
        for handler in ip.sem.unknown_result:
            said = handler(ip, recv, name, args, kwargs, node)
            if said is not None:
                return said
    return out


def unknown_method(ip: Interp, recv: V, name, args, kwargs, node) -> V:
    """A method of an object the engine cannot see: what a framework or torch says it is (an
    `accelerator.backward(loss)`, `x.detach()` on unseen data), else a call that may run a model."""
    for handler in ip.sem.unknown_method:
        out = handler(ip, recv, name, args, kwargs, node)
        if out is not None:
            return out
    return opaque_call(ip, None, args, kwargs, node, extra=recv, outside=True, record=UnseenRec.METHOD)


def _instance_method(ip: Interp, inst: InstanceObj, name, args, kwargs, node) -> V | None:
    """A method an instance's class does not define, that a framework base class gives it."""
    for handler in ip.sem.instance_method:
        out = handler(ip, inst, name, args, kwargs, node)
        if out is not None:
            return out
    return None


def super_method(ip: Interp, o: SuperObj, name, args, kwargs, node, env) -> V:
    mro = o.cls.mro()
    for c in mro[1:]:
        if name in c.methods:
            return call_function(ip, c.methods[name], args, kwargs, node, self_v=o.recv)
    if name == "__init__":
        for m in o.recv.of(ModuleObj):
            if m.in_init:
                ip.sem.base_init(ip, m, args, kwargs, node)  # `super().__init__(in, out)` of nn.Linear
        for inst in o.recv.of(InstanceObj):
            if inst.store is not None:
                _dict_init(ip, inst, args, kwargs)  # `super().__init__(partial(AverageMeter, ...))`
        return NONE
    if name == "forward":
        out = _base_forward(ip, o, args, kwargs, node, env)
        return out if out is not None else UNKNOWN
    # a torch base method (nn.Module.train from an override of train...): not the override again
    mods = o.recv.of(ModuleObj)
    method = ip.sem.objects[ModuleObj].method if ModuleObj in ip.sem.objects else None
    if mods and len(mods) == len(o.recv.objs) and method is not None:
        return join_all([method(ip, m, name, args, kwargs, node, env, module_value(m), base=True) for m in mods])
    return call_method(ip, o.recv, name, args, kwargs, node, env)


def _dict_init(ip: Interp, inst: InstanceObj, args, kwargs) -> None:
    """dict's, defaultdict's or OrderedDict's `__init__` run on a dict-based instance: the factory
    of a defaultdict, the items given."""
    store = inst.store
    assert store is not None
    given = list(args)
    if given and "collections.defaultdict" in _library_bases(inst.cls):
        factory = given.pop(0)
        if isinstance(factory, V) and factory.k != Kind.NONE:
            store.default = factory
    for a in given[:1]:
        for d in a.of(DictObj) if isinstance(a, V) else ():
            for k, v in d.keys.items():
                store.set(k, v)
            if d.rest is not None:
                store.set(None, d.rest)
    for k, v in kwargs.items():
        if k != "**" and isinstance(v, V):
            store.set(k, v)


def _base_forward(ip: Interp, o: SuperObj, args, kwargs, node, env) -> V | None:
    """`super().forward(pred, label)` in a project's subclass of a parameter-free torch module (d2l's
    MaskedSoftmaxCELoss(nn.CrossEntropyLoss)): the functional the base runs, on the same arguments,
    with the reduction the instance holds when it is known (`self.reduction = 'none'`)."""
    strings = [b for c in o.cls.mro() for b in c.bases if isinstance(b, str)]
    bases = {q.rsplit(".", 1)[-1] for q in strings if q.startswith("torch.nn.")} - {"Module"}
    if len(bases) != 1:
        return None
    (short,) = bases
    fn = T.MODULE_FORWARD.get(short)
    if short not in T.FREE_MODULES or fn is None or not fn.startswith("F."):
        return None
    kw = dict(kwargs)
    if short in T.LOSS_MODULES and "reduction" not in kw:
        red = ip.get_attr(o.recv, "reduction", node, env)
        if isinstance(red.const, str):
            kw["reduction"] = red
    return ip.call_qualified("torch.nn.functional." + fn[2:], list(args), kw, node, env)


def sym_method(ip: Interp, o: SymObj, name, args, kwargs, node, recv: V) -> V:
    if name in ("parameters", "named_parameters"):
        return V(
            Kind.PARAMS,
            frozenset((PIter(frozenset((sym_unit(ip, o),)), exact=False, named=name == "named_parameters"),)),
        )
    if name == "backward":
        if args and isinstance(args[0], V) and args[0].carries:
            # `fabric.backward(loss)` on a framework object the engine does not know: the argument
            # carrying gradient is the loss (a tensor's own `gradient=` argument carries none)
            return unknown_method(ip, recv, name, args, kwargs, node)
        recording.do_backward(ip, V(Kind.TENSOR, top=True, site=node), node, loss_node=node.func.value)
        return NONE
    if name in ("scale", "step", "update", "unscale_"):
        scaler = ducks.scaler_of(ip, o, node)
        handler = ip.sem.objects.get(ScalerObj)
        if scaler is not None and handler is not None and handler.method is not None:
            return handler.method(ip, scaler, name, args, kwargs, node, None, V(Kind.SCALER, frozenset((scaler,))))
    if name in ("step", "zero_grad"):
        opt = ducks.optimizer_of(ip, o, node)
        handler = ip.sem.objects.get(OptimObj)
        if opt is not None and handler is not None and handler.method is not None:
            return handler.method(ip, opt, name, args, kwargs, node, None, V(Kind.OPTIM, frozenset((opt,))))
        if name == "step" and ducks.names_a_schedule(node):
            return NONE  # `scheduler.step()` of a schedule handed in: no optimizer steps there
        recording.event(ip, name, node, o)
        return NONE
    if name == "reset_parameters":
        # `model.reset_parameters()` of a model handed in: whatever it holds starts over (a fresh run)
        ip.st.trace.resets.append((frozenset((sym_unit(ip, o).oid,)), ip.seq()))
        return NONE
    if name in T.MODULE_SELF_METHODS:
        return recv
    if name in T.TO_PYTHON or name in T.METADATA_METHODS:
        return V(Kind.NUMBER, site=node)
    if recv.k & Kind.TENSOR and not T.no_tensor_has(name):
        # a tensor handed in (a forward's input run on its own): `pred.sigmoid()` is the tensor
        # method, as `torch.sigmoid(pred)` is the function
        return ip.sem.tensors.method(ip, recv, name, args, kwargs, node, None)
    # an accelerator or a fabric handed in: `model, optimizer = accelerator.prepare(model, optimizer)`
    wrapped = ip.sem.wrapping(ip, recv, name, args, kwargs, node)
    if wrapped is not None:
        return wrapped
    return opaque_call(ip, None, args, kwargs, node, extra=recv)


def _is_record(cls: ClassObj) -> bool:
    """A dataclass-like record (its fields are given to the constructor): no __init__ of its own."""
    if "__init__" in cls.methods:
        return False
    return _is_dataclass(cls) or cls.lookup("__init__") is None


def _is_dataclass(cls: ClassObj) -> bool:
    return any("dataclass" in ast.dump(d) for d in cls.node.decorator_list)


def _spread_keys(spread) -> dict | None:
    """What `**d` gives by name when `d` is known key by key: key -> value (a key only some of the
    dicts joined in `d` hold is unknown); None when its keys are not known."""
    if not isinstance(spread, V) or not spread.objs or not all(isinstance(o, DictObj) for o in spread.objs):
        return None
    dicts = list(spread.objs)
    if any(d.rest is not None for d in dicts):
        return None
    out: dict = {}
    for k in {k for d in dicts for k in d.keys}:
        held = [d.keys[k] for d in dicts if k in d.keys]
        out[k] = join_all(held) if len(held) == len(dicts) else V(Kind.UNKNOWN)
    return out


def dataclass_defaults(cls: ClassObj) -> tuple[list, list]:
    """The fields of a @dataclass (without an __init__ of its own) that have no default (what a
    caller must give), and those whose default is None."""
    fields = _dataclass_fields(cls)
    defaults: dict[str, ast.expr] = {}
    for c in reversed(cls.mro()):
        if isinstance(c, ClassObj) and c.node is not None:
            for stmt in c.node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                    defaults[stmt.target.id] = stmt.value
    none = [n for n in fields if isinstance(d := defaults.get(n), ast.Constant) and d.value is None]
    return [n for n in fields if n not in defaults], none


def _dataclass_fields(cls: ClassObj) -> list:
    """The field names of a @dataclass without an __init__ of its own, bases first; [] otherwise."""
    out = []
    for c in reversed(cls.mro()):
        if not isinstance(c, ClassObj) or c.node is None:
            continue
        if "__init__" in c.methods:
            return []
        if not _is_dataclass(c):
            continue
        for stmt in c.node.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and "ClassVar" not in ast.dump(stmt.annotation)
                and stmt.target.id not in out
            ):
                out.append(stmt.target.id)
    return out

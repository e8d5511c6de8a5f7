"""Optimizers, LR schedulers and grad scalers: what building them records (their param groups),
and what their methods do to a training step (zero_grad, step, add_param_group, scaler.scale,
scaler.step, scheduler.step).

Handlers of the semantics tables (torch/register.py) for `torch.optim.*` names and for OptimObj,
SchedObj and ScalerObj.
"""

from __future__ import annotations

from collections.abc import Callable

from ..interp import ducks, recording
from ..interp.core import Core
from ..interp.frames import PathRaises
from ..interp.objects import (
    DictObj,
    FuncObj,
    Group,
    ListObj,
    ModuleObj,
    OptimObj,
    PIter,
    ScalerObj,
    SchedObj,
    Site,
    SymObj,
    TensorObj,
    Unit,
    is_closed,
)
from ..interp.trace import EventKind, NonLeafRec
from ..interp.values import NONE, UNKNOWN, Fact, Kind, V
from ..ops import torch_api as T


def make_optimizer(ip: Core, qual, args, kwargs, node, env) -> V:
    params = args[0] if args else kwargs.get("params", UNKNOWN)
    base = next((v for v in (params, kwargs.get("optimizer"), kwargs.get("base_optimizer")) if _optimizers(v)), None)
    if base is not None:
        # a wrapper over an optimizer (Lookahead(opt), timm's and torch-optimizer's): it holds the
        # param groups of the one it wraps and its step() and zero_grad() run that one's, so what
        # it does to parameters is what the wrapped optimizer does
        return base
    site = Site(ip.st.sf, node)
    o = OptimObj(qual, "<optimizer>", site, ip.seq(), ip.st.ctx)
    pnode = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), node)
    nonleaf, on_some_path = _nonleaves(params) if isinstance(params, V) else ([], [])
    for s in nonleaf + on_some_path:
        ip.st.trace.nonleaf.append(NonLeafRec(s.site, Site(ip.st.sf, node), s.nonleaf_of, "optimizer", ip.st.ctx))
    if nonleaf:
        # torch refuses them: "can't optimize a non-leaf Tensor"; nothing after this runs
        raise PathRaises()
    if isinstance(params, V):
        parse_groups(ip, o, params, pnode)
    else:
        o.complete = o.args_only = False
    o.stateless = _stateless(qual, args, kwargs) and not any("momentum" in g.options for g in o.groups)
    ip.st.trace.optimizers.append(o)
    ip.event(EventKind.OPT_NEW, node, o)
    return V(Kind.OPTIM, frozenset((o,)), site=node)


def _optimizers(v) -> bool:
    """`v` is one or more optimizers and nothing else."""
    return isinstance(v, V) and bool(v.objs) and all(isinstance(o, OptimObj) for o in v.objs)


def parse_groups(ip: Core, o: OptimObj, params: V, node):
    dicts: list[DictObj] = []
    for x in params.objs:
        if isinstance(x, ListObj) and x.content is not None:
            dicts.extend(d for d in x.content.objs if isinstance(d, DictObj))
        elif isinstance(x, DictObj):
            dicts.append(x)
    if params.items is not None:
        for it in params.items:
            dicts.extend(d for d in it.objs if isinstance(d, DictObj))
    if dicts:
        for d in sorted(dicts, key=lambda z: z.oid):
            pv = d.keys.get("params")
            if pv is None:
                o.complete = o.args_only = False
                continue
            add_group(ip, o, pv, d.site or Site(ip.st.sf, node), tuple(k for k in d.keys if k != "params"))
        return
    add_group(ip, o, params, Site(ip.st.sf, node), ())


def add_group(ip: Core, o: OptimObj, pv: V, site, options):
    units, exact, filtered, sources, args_only = param_set(ip, pv)
    frame = ip.st.stack[-1]
    from_arg = any(x in frame.arg_objs for x in pv.objs) if frame.arg_objs else False
    g = Group(frozenset(units), exact, filtered, site, options, frozenset(sources), from_arg)
    if not exact or any(u.kind == Unit.OPAQUE and not is_closed(u) for u in units):
        o.complete = False
        if not args_only:
            o.args_only = False
    o.groups.append(g)


def param_set(ip: Core, v: V, depth: int = 0) -> tuple[set[Unit], bool, bool, set[ModuleObj], bool]:
    """(units, exact, filtered, sources, args_only) of an optimizer's params value. `args_only`:
    whatever is not known one by one is the parameters of the running function's arguments
    (`encoder.parameters()` of a parameter `encoder`), made before the call; not a factory's
    result, an unknown value or a filtered generator."""
    units: set[Unit] = set()
    sources: set[ModuleObj] = set()  # modules whose .parameters() they came from
    exact, filtered, args_only = True, False, True
    if not v.top and not v.objs and v.items is None and v.facts & Fact.NOGRAD:
        return units, exact, filtered, sources, args_only  # a buffer: no parameter (torch accepts the tensor)
    if v.top or (not v.objs and v.items is None):
        return units, False, filtered, sources, False
    if v.items is not None:
        for it in v.items:
            u2, e2, f2, s2, a2 = param_set(ip, it, depth + 1)
            units |= u2
            exact &= e2
            filtered |= f2
            sources |= s2
            args_only &= a2
        return units, exact, filtered, sources, args_only
    for o in v.objs:
        if isinstance(o, Unit):
            units.add(o)
            if o.kind == Unit.OPAQUE and not is_closed(o):
                exact = False
                args_only &= o.arg
        elif isinstance(o, PIter):
            units |= o.units
            exact &= o.exact
            filtered |= o.filtered
            sources |= o.sources
            if not o.exact:
                args_only &= bool(o.units) and all(u.arg for u in o.units)
        elif isinstance(o, ListObj) and depth < 6:
            if o.content is None:
                continue
            u2, e2, f2, s2, a2 = param_set(ip, o.content, depth + 1)
            units |= u2
            exact &= e2
            filtered |= f2
            sources |= s2
            args_only &= a2
        elif isinstance(o, SymObj):
            units.add(ip.sym_unit(o))
            exact = False
        elif isinstance(o, DictObj):
            pv = o.keys.get("params")
            if pv is not None:
                u2, e2, f2, s2, a2 = param_set(ip, pv, depth + 1)
                units |= u2
                exact &= e2
                args_only &= a2
            else:
                exact = args_only = False
        elif isinstance(o, TensorObj):
            pass
        elif isinstance(o, ModuleObj) and o.spec in T.PARAMETER_SEQUENCES and not o.opaque:
            # `Adam(self.vars)` of an nn.ParameterList: iterating it yields its parameters
            units.update(u for u in o.children.values() if isinstance(u, Unit))
            sources.add(o)
        else:
            exact = args_only = False
    return units, exact, filtered, sources, args_only


def make_scheduler(ip: Core, qual, args, kwargs, node) -> V:
    opt = args[0] if args else kwargs.get("optimizer")
    o = next(iter(opt.of(OptimObj)), None) if isinstance(opt, V) else None
    s = SchedObj(qual, "<scheduler>", Site(ip.st.sf, node), ip.seq(), o, _counts_steps(qual, args, kwargs))
    ip.event(EventKind.SCHED_NEW, node, s)
    return V(Kind.SCHED, frozenset((s,)))


def optimizer_method(ip: Core, o: OptimObj, name, args, kwargs, node, env, recv=None) -> V:
    handler = OPTIMIZER_METHODS.get(name)
    if handler is None:
        return NONE  # another method of torch.optim.Optimizer: nothing the training step depends on
    return handler(ip, o, args, kwargs, node, env)


def _zero_grad(ip: Core, o: OptimObj, args, kwargs, node, env) -> V:
    ip.event(EventKind.ZERO_GRAD, node, o, units=o.units())
    return NONE


def _step(ip: Core, o: OptimObj, args, kwargs, node, env) -> V:
    closure = args[0] if args else kwargs.get("closure")
    if isinstance(closure, V) and closure.of(FuncObj):
        # LBFGS and friends: the closure's zero_grad/backward run inside the step
        ip.event(EventKind.STEP, node, o, detail="closure", units=o.units())
        out = ip.call_value(closure, [], {}, node, env)
        recording.stepped(ip, o, node)
        return out
    ip.event(EventKind.STEP, node, o, units=o.units())
    recording.stepped(ip, o, node)
    return NONE


def _add_param_group(ip: Core, o: OptimObj, args, kwargs, node, env) -> V:
    if not args:
        return NONE
    for d in args[0].of(DictObj):
        pv = d.keys.get("params")
        if pv is not None:
            add_group(ip, o, pv, d.site or Site(ip.st.sf, node), tuple(k for k in d.keys if k != "params"))
    ip.event(EventKind.ADD_PARAM_GROUP, node, o)
    return NONE


def _state_dict(ip: Core, o: OptimObj, args, kwargs, node, env) -> V:
    return V(Kind.DICT, frozenset((DictObj(None),)))


OPTIMIZER_METHODS: dict[str, Callable[..., V]] = {
    "zero_grad": _zero_grad,
    "step": _step,
    "add_param_group": _add_param_group,
    "state_dict": _state_dict,
}


def scaler_method(ip: Core, s: ScalerObj, name, args, kwargs, node, env=None, recv=None) -> V:
    handler = SCALER_METHODS.get(name)
    return handler(ip, s, args, node) if handler is not None else UNKNOWN


def _scaler_event(ip: Core, s: ScalerObj, kind, node, obj, units=None) -> None:
    """A scaler's own event; none for `GradScaler(enabled=False)`: its scale() gives the loss back,
    its step() just steps, so the rules see no scaler at all."""
    if not s.disabled:
        ip.event(kind, node, obj, units=units)


def _scale(ip: Core, s: ScalerObj, args, node) -> V:
    _scaler_event(ip, s, EventKind.SCALER_SCALE, node, s)
    return args[0] if args else UNKNOWN


def _scaler_step(ip: Core, s: ScalerObj, args, node) -> V:
    opt = args[0] if args else UNKNOWN
    optims = list(opt.of(OptimObj))
    given = getattr(node, "args", None)
    for o in opt.of(SymObj):
        # a trainer's optimizer argument cleared with zero_grad() where it is stepped (interp/ducks.py)
        duck = ducks.optimizer_of(ip, o, node, text=ducks.text_of(given[0])) if given else None
        if duck is not None:
            optims.append(duck)
        else:
            ip.event(EventKind.STEP, node, o, detail="scaler")
    for o in optims:
        ip.event(EventKind.STEP, node, o, detail="scaler", units=o.units())
        recording.stepped(ip, o, node)
    _scaler_event(ip, s, EventKind.SCALER_STEP, node, s)
    return NONE


def _update(ip: Core, s: ScalerObj, args, node) -> V:
    _scaler_event(ip, s, EventKind.SCALER_UPDATE, node, s)
    return NONE


def _unscale(ip: Core, s: ScalerObj, args, node) -> V:
    opts = list(args[0].of(OptimObj)) if args and isinstance(args[0], V) else []
    if not opts and args and isinstance(args[0], V) and getattr(node, "args", None):
        for o in args[0].of(SymObj):
            duck = ducks.optimizer_of(ip, o, node, text=ducks.text_of(node.args[0]))
            if duck is not None:
                opts.append(duck)
    _scaler_event(ip, s, EventKind.UNSCALE, node, opts[0] if opts else None, opts[0].units() if opts else None)
    return NONE


SCALER_METHODS: dict[str, Callable[..., V]] = {
    "scale": _scale,
    "step": _scaler_step,
    "update": _update,
    "unscale_": _unscale,
}


def optimizer_attr(ip: Core, o: OptimObj, attr, node) -> V:
    if attr == "param_groups":
        d = DictObj(Site(ip.st.sf, node))
        d.set("params", V(Kind.PARAMS, frozenset((PIter(o.units(), site=o.site),))))
        lst = ListObj(V(Kind.DICT, frozenset((d,))), Site(ip.st.sf, node))
        return V(Kind.LIST, frozenset((lst,)))
    return UNKNOWN


def scheduler_method(ip: Core, s: SchedObj, name, args, kwargs, node, env, recv) -> V:
    if name == "step":
        # stepped on a value (`scheduler.step(val_loss)`): a plateau schedule's metric; given the
        # epoch (`step(epoch=e)`, or positionally to a torch schedule that has no metric), the
        # schedule is set from it, not advanced by one
        detail = "metric" if args or "metrics" in kwargs else None
        short = str(s.qual).rpartition(".")[2]
        if "epoch" in kwargs or (args and short in T.SCHEDULERS and short != "ReduceLROnPlateau"):
            detail = "epoch"
        ip.event(EventKind.SCHED_STEP, node, s, detail=detail)
    return V(Kind.NUMBER) if name in ("get_last_lr", "get_lr") else NONE


def make_scaler(ip: Core, qual, args, kwargs, node) -> V:
    s = ScalerObj(qual, "<scaler>", Site(ip.st.sf, node), ip.seq())
    enabled = kwargs.get("enabled")
    s.disabled = isinstance(enabled, V) and enabled.const is False
    _scaler_event(ip, s, EventKind.SCALER_NEW, node, s)
    return V(Kind.SCALER, frozenset((s,)))


def _counts_steps(qual, args, kwargs) -> bool:
    """Whether rebuilding the scheduler loses something: a chainable decay (ExponentialLR,
    StepLR(step_size=1), MultiplicativeLR) continues from the current rate; a warmup, a cycle, a
    milestone list or a step_size > 1 restart from the beginning."""
    short = qual.rsplit(".", 1)[-1]
    if short in T.CHAINABLE_SCHEDULERS:
        return False
    if short == "StepLR":
        size = kwargs.get("step_size", args[1] if len(args) > 1 else None)
        return not (isinstance(size, V) and size.const == 1)
    return True


def _nonleaves(params: V) -> tuple[list, list]:
    """Elements of an optimizer's parameter list that are non-leaves made from a requires_grad leaf by
    an op (`torch.randn(n, requires_grad=True) * 0.01`): certainly, and on some path only, the leaf
    itself on the others (`if cuda: x = x.cuda()`: torch raises on the path that moved it)."""
    elems = list(params.items) if params.items is not None else []
    for lst in params.of(ListObj):
        elems.extend(lst.elems or ())
    certain: list = []
    some: list = []
    for e in elems:
        if not isinstance(e, V) or not e.objs:
            continue
        made = [o for o in e.objs if isinstance(o, TensorObj) and o.nonleaf_of is not None]
        if len(made) == len(e.objs):
            certain.extend(made)
        elif made and all(o in made or any(m.nonleaf_of is o for m in made) for o in e.objs):
            some.extend(made)
    return certain, some


def _stateless(qual: str, args, kwargs) -> bool:
    """Plain SGD (momentum 0, its default) keeps no state between steps: building it anew each
    iteration changes nothing (torch stores a momentum buffer only when momentum != 0)."""
    if qual.rsplit(".", 1)[-1] != "SGD" or not qual.startswith("torch.optim") or "**" in kwargs:
        return False
    momentum = kwargs.get("momentum", args[2] if len(args) > 2 else None)
    if momentum is None:
        return True
    return isinstance(momentum, V) and momentum.const in (0, 0.0) and not isinstance(momentum.const, bool)


def new_scheduler(ip: Core, qual, args, kwargs, node, env) -> V:
    return make_scheduler(ip, qual, args, kwargs, node)


def new_optimizer(ip: Core, qual, args, kwargs, node, env) -> V:
    return make_optimizer(ip, qual, args, kwargs, node, env)


def new_scaler(ip: Core, qual, args, kwargs, node, env) -> V:
    return make_scaler(ip, qual, args, kwargs, node)

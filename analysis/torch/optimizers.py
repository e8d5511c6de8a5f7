"""Optimizers, schedulers, grad scalers, and the lifecycle events of a training step
(zero_grad, backward, step, ...) recorded in the trace.

A mixin of Interpreter (interpreter.py).
"""

from __future__ import annotations

from ..interp.frames import PathRaises
from ..interp.objects import (
    DictObj,
    FuncObj,
    Group,
    ListObj,
    OptimObj,
    PIter,
    ScalerObj,
    SchedObj,
    Site,
    SymObj,
    TensorObj,
    Unit,
)
from ..interp.trace import NonLeafRec
from ..interp.values import NONE, UNKNOWN, Kind, V
from ..libraries.semantics import is_closed


class OptimizerOps:
    def make_optimizer(self, qual, args, kwargs, node, env) -> V:
        site = Site(self.sf, node)
        o = OptimObj(qual, "<optimizer>", site, self.seq(), self.ctx)
        params = args[0] if args else kwargs.get("params", UNKNOWN)
        pnode = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), node)
        nonleaf = _nonleaves(params) if isinstance(params, V) else []
        if nonleaf:
            # torch refuses them: "can't optimize a non-leaf Tensor"; nothing after this runs
            for s in nonleaf:
                self.trace.nonleaf.append(NonLeafRec(s.site, Site(self.sf, node), s.nonleaf_of, "optimizer", self.ctx))
            raise PathRaises()
        if isinstance(params, V):
            self.parse_groups(o, params, pnode)
        else:
            o.complete = False
        o.stateless = _stateless(qual, args, kwargs) and not any("momentum" in g.options for g in o.groups)
        self.trace.optimizers.append(o)
        self.event("opt_new", node, o)
        return V(Kind.OPTIM, frozenset((o,)), site=node)

    def parse_groups(self, o: OptimObj, params: V, node):
        dicts = []
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
                    o.complete = False
                    continue
                self.add_group(o, pv, d.site or Site(self.sf, node), tuple(k for k in d.keys if k != "params"))
            return
        self.add_group(o, params, Site(self.sf, node), ())

    def add_group(self, o: OptimObj, pv: V, site, options):
        units, exact, filtered, sources = self.param_set(pv)
        frame = self.stack[-1]
        from_arg = any(x in frame.arg_objs for x in pv.objs) if frame.arg_objs else False
        g = Group(frozenset(units), exact, filtered, site, options, frozenset(sources), from_arg)
        if not exact or any(u.kind == Unit.OPAQUE and not is_closed(u) for u in units):
            o.complete = False
        o.groups.append(g)

    def param_set(self, v: V, depth=0):
        units, exact, filtered, sources = set(), True, False, set()
        if v.top or (not v.objs and v.items is None):
            return units, False, filtered, sources
        if v.items is not None:
            for it in v.items:
                u2, e2, f2, s2 = self.param_set(it, depth + 1)
                units |= u2
                exact &= e2
                filtered |= f2
                sources |= s2
            return units, exact, filtered, sources
        for o in v.objs:
            if isinstance(o, Unit):
                units.add(o)
                if o.kind == Unit.OPAQUE and not is_closed(o):
                    exact = False
            elif isinstance(o, PIter):
                units |= o.units
                exact &= o.exact
                filtered |= o.filtered
                sources |= o.sources
            elif isinstance(o, ListObj) and depth < 6:
                if o.content is None:
                    continue
                u2, e2, f2, s2 = self.param_set(o.content, depth + 1)
                units |= u2
                exact &= e2
                filtered |= f2
                sources |= s2
            elif isinstance(o, SymObj):
                units.add(self.sym_unit(o))
                exact = False
            elif isinstance(o, DictObj):
                pv = o.keys.get("params")
                if pv is not None:
                    u2, e2, f2, s2 = self.param_set(pv, depth + 1)
                    units |= u2
                    exact &= e2
                else:
                    exact = False
            elif isinstance(o, TensorObj):
                pass
            else:
                exact = False
        return units, exact, filtered, sources

    def make_scheduler(self, qual, args, kwargs, node) -> V:
        opt = args[0] if args else kwargs.get("optimizer")
        o = next(iter(opt.of(OptimObj)), None) if isinstance(opt, V) else None
        s = SchedObj(qual, "<scheduler>", Site(self.sf, node), self.seq(), o, _counts_steps(qual, args, kwargs))
        self.event("sched_new", node, s)
        return V(Kind.SCHED, frozenset((s,)))

    def optimizer_method(self, o: OptimObj, name, args, kwargs, node, env) -> V:
        if name == "zero_grad":
            self.event("zero_grad", node, o, units=o.units())
            return NONE
        if name == "step":
            closure = args[0] if args else kwargs.get("closure")
            if isinstance(closure, V) and closure.of(FuncObj):
                # LBFGS and friends: the closure's zero_grad/backward run inside the step
                self.event("step", node, o, detail="closure", units=o.units())
                out = self.call_value(closure, [], {}, node, env)
                self.stepped(o, node)
                return out
            self.event("step", node, o, units=o.units())
            self.stepped(o, node)
            return NONE
        if name == "add_param_group" and args:
            g = args[0]
            for d in g.of(DictObj):
                pv = d.keys.get("params")
                if pv is not None:
                    self.add_group(o, pv, d.site or Site(self.sf, node), tuple(k for k in d.keys if k != "params"))
            self.event("add_param_group", node, o)
            return NONE
        if name in ("state_dict",):
            return V(Kind.DICT, frozenset((DictObj(None),)))
        return NONE

    def scaler_method(self, s: ScalerObj, name, args, kwargs, node) -> V:
        if name == "scale":
            self.event("scaler_scale", node, s)
            return args[0] if args else UNKNOWN
        if name == "step":
            opt = args[0] if args else UNKNOWN
            for o in opt.of(OptimObj):
                self.event("step", node, o, detail="scaler", units=o.units())
                self.stepped(o, node)
            for o in opt.of(SymObj):
                self.event("step", node, o, detail="scaler")
            self.event("scaler_step", node, s)
            return NONE
        if name == "update":
            self.event("scaler_update", node, s)
            return NONE
        if name == "unscale_":
            opts = args[0].of(OptimObj) if args and isinstance(args[0], V) else []
            self.event("unscale", node, opts[0] if opts else None, units=opts[0].units() if opts else None)
            return NONE
        return UNKNOWN


def _counts_steps(qual, args, kwargs) -> bool:
    """Whether rebuilding the scheduler loses something: a chainable decay (ExponentialLR,
    StepLR(step_size=1), MultiplicativeLR) continues from the current rate; a warmup, a cycle, a
    milestone list or a step_size > 1 restart from the beginning."""
    short = qual.rsplit(".", 1)[-1]
    if short in ("ExponentialLR", "MultiplicativeLR"):
        return False
    if short == "StepLR":
        size = kwargs.get("step_size", args[1] if len(args) > 1 else None)
        return not (isinstance(size, V) and size.const == 1)
    return True


def _nonleaves(params: V) -> list:
    """Elements of an optimizer's parameter list that are certainly non-leaves made from a
    requires_grad leaf by an op (`torch.randn(n, requires_grad=True) * 0.01`)."""
    elems = list(params.items) if params.items is not None else []
    for lst in params.of(ListObj):
        elems.extend(lst.elems or ())
    out = []
    for e in elems:
        if not isinstance(e, V) or not e.objs:
            continue
        if all(isinstance(o, TensorObj) and o.nonleaf_of is not None for o in e.objs):
            out.extend(e.objs)
    return out


def _stateless(qual: str, args, kwargs) -> bool:
    """Plain SGD (momentum 0, its default) keeps no state between steps: building it anew each
    iteration changes nothing (torch stores a momentum buffer only when momentum != 0)."""
    if qual.rsplit(".", 1)[-1] != "SGD" or not qual.startswith("torch.optim") or "**" in kwargs:
        return False
    momentum = kwargs.get("momentum", args[2] if len(args) > 2 else None)
    if momentum is None:
        return True
    return isinstance(momentum, V) and momentum.const in (0, 0.0) and not isinstance(momentum.const, bool)

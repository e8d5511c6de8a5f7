"""Optimizers, schedulers, grad scalers, and the lifecycle events of a training step
(zero_grad, backward, step, ...) recorded in the trace.

A mixin of Interpreter (interpreter.py).
"""
from __future__ import annotations


from .objects import (
    DictObj, FuncObj, Group, ListObj, OptimObj, PIter, ScalerObj, SchedObj, Site, SymObj, TensorObj, Unit,
)
from .library_ops import is_closed
from .trace import BackwardRec, Event, LossRec
from .values import NONE, UNKNOWN, Fact, Kind, V


class OptimizerOps:
    def event(self, kind, node, obj=None, detail=None):
        ev = Event(self.seq(), kind, Site(self.sf, node), self.ctx, obj, detail, guarded=self.cond > 0)
        self.trace.events.append(ev)
        return ev

    def loss_value(self, out: V, argv, label) -> V:
        """A loss function's result: its target's stop-gradients are the idiom (role 'target'), and it
        is a loss term whose reaching a backward() GA209 checks."""
        if len(argv) >= 2 and isinstance(argv[0], V) and isinstance(argv[1], V):
            target, pred = argv[1], argv[0]
            for c in target.cuts - pred.cuts:
                if not c.role:
                    c.role = "target"
        return self.note_loss(out, label, named=False)

    def note_loss(self, v: V, label, named=True) -> V:
        """Record a loss term (GA209): computed with gradient from known leaves, outside no_grad."""
        if not v.org or self.nograd is not None or v.facts & Fact.NOGRAD or (named and v.terms):
            return v
        stmt = self.cur_stmt if self.cur_stmt is not None else v.site
        rec = LossRec(self.seq(), Site(self.sf, stmt), self.ctx, v.org, v.weak, label, self.stack[-1].label)
        self.trace.losses.append(rec)
        return v.replace(terms=v.terms | {rec})

    def do_backward(self, loss: V, node, kind="backward", inputs=None, loss_node=None):
        site = Site(self.sf, node)
        frame = self.stack[-1]
        rec = BackwardRec(self.seq(), site, self.ctx, loss, kind,
                          self.sf.segment(loss_node) if loss_node is not None else "", frame.label)
        rec.inputs = inputs
        rec.nograd = self.nograd
        interesting = set(loss.org) | set(loss.weak)
        for c in loss.cuts:
            interesting |= c.removed
            interesting |= c.removed_weak
        for o in self.trace.optimizers:
            rec.optimizers.append((o, o.units(), o.complete))
            interesting |= o.units()
        rec.frozen = {u: u.frozen for u in interesting}
        rec.versions = {s: s.storage.version for s in loss.saves}
        rec.event = self.event(kind, node, rec)
        self.trace.backwards.append(rec)
        return rec

    def make_optimizer(self, qual, args, kwargs, node, env) -> V:
        site = Site(self.sf, node)
        o = OptimObj(qual, "<optimizer>", site, self.seq(), self.ctx)
        params = args[0] if args else kwargs.get("params", UNKNOWN)
        pnode = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), node)
        if isinstance(params, V):
            self.parse_groups(o, params, pnode)
        else:
            o.complete = False
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
        s = SchedObj(qual, "<scheduler>", Site(self.sf, node), self.seq(), o)
        self.event("sched_new", node, s)
        return V(Kind.SCHED, frozenset((s,)))

    def optimizer_method(self, o: OptimObj, name, args, kwargs, node, env) -> V:
        if name == "zero_grad":
            self.event("zero_grad", node, o)
            return NONE
        if name == "step":
            self.event("step", node, o)
            if args and isinstance(args[0], V) and args[0].of(FuncObj):
                return self.call_value(args[0], [], {}, node, env)
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
                self.event("step", node, o, detail="scaler")
            for o in opt.of(SymObj):
                self.event("step", node, o, detail="scaler")
            self.event("scaler_step", node, s)
            return NONE
        if name == "update":
            self.event("scaler_update", node, s)
            return NONE
        if name == "unscale_":
            self.event("unscale", node, args[0] if args else None)
            return NONE
        return UNKNOWN

"""Turn an interpreter Trace into the frozen training-step model (model.py)."""
from __future__ import annotations

from . import model as M
from .objects import FROZEN, MAYBE, OptimObj, Site, SymObj, TensorObj, Unit
from .trace import InplaceRec, Trace


class Builder:
    def __init__(self, path: str):
        self.path = path
        self._params: dict[int, M.Param] = {}
        self._spans: dict[int, M.Span] = {}
        self._optims: dict[int, M.Optimizer] = {}

    # ------------------------------------------------------------ leaves

    def span(self, site: Site | None) -> M.Span | None:
        if site is None:
            return None
        node = site.node
        key = id(node)
        sp = self._spans.get(key)
        if sp is None:
            sf = site.mod
            line = getattr(node, "lineno", 1)
            end_line = getattr(node, "end_lineno", line) or line
            col = sf.char_col(line, getattr(node, "col_offset", 0))
            end_col = sf.char_col(end_line, getattr(node, "end_col_offset", 0) or 0)
            sp = M.Span(sf.path, line, col, end_line, end_col)
            self._spans[key] = sp
        return sp

    def param(self, u: Unit) -> M.Param:
        p = self._params.get(u.oid)
        if p is None:
            p = M.Param(u.oid, u.name, u.module_path, u.kind, self.span(u.site), _origin(u),
                        u.created_in_loop and u.in_init)
            self._params[u.oid] = p
        return p

    def params(self, units) -> frozenset:
        return frozenset(self.param(u) for u in units)

    def optimizer(self, o: OptimObj) -> M.Optimizer:
        m = self._optims.get(o.oid)
        if m is None:
            groups = tuple(
                M.Group(self.params(g.units), g.exact, g.filtered, self.span(g.site), tuple(g.options), g.from_arg,
                        tuple(sorted(s.path() for s in g.sources)))
                for g in o.groups)
            m = M.Optimizer(o.oid, o.label, o.type_name(), self.span(o.site), o.seq, groups, o.complete,
                            any(c[0] == "loop" for c in o.ctx))
            self._optims[o.oid] = m
        return m

    def cuts(self, cuts) -> tuple:
        merged: dict = {}
        for c in cuts:
            key = (c.kind, id(c.site.node))
            prev = merged.get(key)
            if prev is None:
                merged[key] = [c.kind, c.site, c.detail, set(c.removed), set(c.removed_weak), c.top, c.receiver, c.note]
            else:
                prev[3] |= c.removed
                prev[4] |= c.removed_weak
                prev[5] = prev[5] or c.top
        out = []
        for kind, site, detail, removed, weak, top, receiver, note in merged.values():
            out.append(M.Cut(kind, self.span(site), detail, self.params(removed), self.params(weak - removed), top,
                             self.span(Site(site.mod, receiver)) if receiver is not None else None, note))
        out.sort(key=lambda c: (c.span.path, c.span.line, c.span.col))
        return tuple(out)

    # ------------------------------------------------------------ the model

    def build(self, trace: Trace) -> M.ProgramModel:
        events = trace.events
        unfrozen_units = {u.oid for f in trace.freezes if f.value for u in f.units}
        manual_units = {u.oid: u for u, _ in trace.manual_updates}
        steps = []
        for rec in trace.backwards:
            steps.append(self.step(rec, events, unfrozen_units, manual_units))
        steps = _share_accumulated(steps)
        freezes = tuple(M.Freeze(self.params(f.units), self.span(f.site), self.span(f.anchor), f.value, f.strong,
                                 f.seq, tuple(sorted(getattr(t, "path", lambda: getattr(t, "name", "?"))()
                                                     for t in f.targets)))
                        for f in trace.freezes)
        updates = tuple(M.LeafUpdate(self.span(r.site), r.kind, self.params(r.units), r.nograd, r.detail or "",
                                     r.detail or "", any(c[0] == "loop" for c in r.ctx))
                        for r in trace.inplace if r.kind in (InplaceRec.LEAF, InplaceRec.REBIND))
        unregs = tuple(M.Unregistered(self.span(r.site), r.owner.path(), r.owner.type_name(), r.attr, r.kind,
                                      self.params(r.units), r.fresh,
                                      self.span(Site(r.site.mod, r.value_node)) if r.value_node is not None else None)
                       for r in trace.unregs)
        new = tuple(M.NewParams(self.span(n.site), self.params(n.units), n.seq, n.in_loop) for n in trace.new_units)
        optims = tuple(self.optimizer(o) for o in trace.optimizers)
        return M.ProgramModel(self.path, tuple(steps), optims, freezes, updates, unregs, new,
                              self.params(manual_units.values()), trace.incomplete)

    def step(self, rec, events, unfrozen_units, manual_units) -> M.Step:
        loss = rec.loss
        same, loop_prefix = _iteration(events, rec)
        stepped_objs = _stepped(same, rec)
        trained = set()
        known = bool(stepped_objs)
        snap = {o.oid: (o, units, complete) for o, units, complete in rec.optimizers}
        for o in stepped_objs:
            if isinstance(o, OptimObj) and o.oid in snap:
                _, units, complete = snap[o.oid]
                trained |= units
                known = known and complete
            else:
                known = False
        trained |= {u for u in manual_units.values()}
        frozen = {u for u, st in rec.frozen.items() if st == FROZEN}
        maybe = {u for u, st in rec.frozen.items() if st == MAYBE}
        trained -= frozen
        hits = []
        for s in loss.saves:
            storage = s.storage
            if not isinstance(storage, TensorObj):
                continue
            now = rec.versions.get(s, storage.version)
            if now > s.version:
                for version, site in storage.bumps:
                    if s.version < version <= now:
                        hits.append(M.InplaceHit(self.span(site), self.span(s.site), s.op))
        fresh = []
        for u in loss.org:
            if u.kind == Unit.FRESH:
                fresh.append((self.param(u), self.cuts(u.source_cuts)))
        inputs = frozenset()
        if rec.inputs is not None:
            inputs = self.params(o for o in rec.inputs.objs if isinstance(o, Unit)) | self.params(
                u for it in (rec.inputs.items or ()) for u in it.objs if isinstance(u, Unit))
        loop_span = None
        if loop_prefix and loop_prefix[-1][0] == "loop":
            loop_span = self.span(Site(_site_mod(rec, loop_prefix), loop_prefix[-1][1]))
        ev = tuple(self.event(e, len(loop_prefix)) for e in same)
        return M.Step(
            span=self.span(rec.site), kind=rec.kind, function=rec.func, loss=rec.loss_expr,
            loss_span=self.span(Site(rec.site.mod, loss.site)) if loss.site is not None and hasattr(loss.site, "lineno")
            and _same_file(rec, loss.site) else None,
            reached=self.params(loss.org), reached_weak=self.params(loss.weak - loss.org), top=loss.top,
            cuts=self.cuts(loss.cuts),
            optimizers=tuple(self.optimizer(o) for o, _, _ in rec.optimizers),
            stepped=tuple(o.oid for o in stepped_objs),
            trained=self.params(trained), trained_known=known,
            frozen=self.params(frozen), maybe_frozen=self.params(maybe),
            unfrozen_later=self.params(u for u in frozen | maybe if u.oid in unfrozen_units),
            inputs=inputs, inplace=tuple(hits), events=ev, loop=loop_span, fresh=tuple(fresh),
            nograd=self.span(rec.nograd), seq=rec.seq, iteration=hash(loop_prefix),
            entry="script" if rec.ctx[:1] == (("root", 1),) else "function")

    def event(self, e, depth) -> M.Event:
        target, key = "", 0
        o = e.obj
        if o is not None and hasattr(o, "label"):
            target, key = o.label, o.oid
        elif o is not None and hasattr(o, "oid"):
            key = o.oid
        via = tuple(self.span(Site(_mod_of(c), c[1])) for c in e.ctx[depth:] if c[0] == "call" and _mod_of(c))
        return M.Event(e.kind, self.span(e.site), e.seq, target, key, e.guarded, tuple(v for v in via if v))


def _share_accumulated(steps):
    """Losses backpropagated in one iteration for the same optimizer step add up their gradients."""
    from dataclasses import replace
    groups: dict = {}
    for i, st in enumerate(steps):
        for key in st.stepped:
            groups.setdefault((st.iteration, key), []).append(i)
    extra: dict = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        for i in members:
            others = frozenset().union(*(steps[j].reached | steps[j].reached_weak for j in members if j != i))
            extra[i] = extra.get(i, frozenset()) | others
    return [replace(st, co_reached=extra[i]) if i in extra else st for i, st in enumerate(steps)]


def _origin(u: Unit) -> str:
    m = u.owner
    hops = 0
    while m is not None and hops < 32:
        if m.copy_of is not None:
            return "copy"
        if m.loaded_from:
            return "loaded"
        m = m.parent
        hops += 1
    return ""


def _mod_of(ctx_entry):
    """The file of a call-site node in a ctx entry: ('call', node, fn, sf)."""
    return ctx_entry[3] if len(ctx_entry) > 3 else None


def _site_mod(rec, prefix):
    entry = prefix[-1]
    return entry[3] if len(entry) > 3 else rec.site.mod


def _same_file(rec, node) -> bool:
    return True


def _iteration(events, rec):
    """Events of the loop iteration holding the backward (or of its whole run), and that prefix."""
    ctx = rec.ctx
    idx = None
    for i in range(len(ctx) - 1, -1, -1):
        if ctx[i][0] == "loop":
            idx = i
            break
    prefix = ctx[:idx + 1] if idx is not None else ctx[:1]
    n = len(prefix)
    same = [e for e in events if e.ctx[:n] == prefix]
    return same, prefix


def _stepped(same, rec):
    """The optimizers this backward feeds: stepped after it (before the next backward), else in its iteration."""
    after = [e for e in same if e.seq > rec.event.seq]
    window = []
    for e in after:
        if e.kind in ("backward", "grad") and e.obj is not rec:
            break
        window.append(e)
    for pool in (window, after, same):
        objs = []
        for e in pool:
            if e.kind == "step" and e.obj is not None and e.obj not in objs:
                objs.append(e.obj)
        if objs:
            return objs
    return []

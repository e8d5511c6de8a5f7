"""Turn an interpreter Trace into the frozen training-step model (model.py)."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable
from typing import Any, overload

from ..interp import settings, shapes
from ..interp.loop_facts import counter_like, rebound
from ..interp.objects import (
    FROZEN,
    MAYBE,
    DictObj,
    InstanceObj,
    ListObj,
    ModuleObj,
    Obj,
    OptimObj,
    PIter,
    Site,
    SymObj,
    TensorObj,
    Unit,
    is_closed,
)
from ..interp.trace import (
    SUSPICIOUS,
    AccRec,
    BackwardRec,
    CarryRec,
    EventKind,
    InplaceRec,
    LossRec,
    RiskRec,
    SaveRec,
    Trace,
    UnseenRec,
)
from ..interp.trace import Cut as CutRec
from ..interp.trace import Event as EventRec
from ..interp.values import Fact, Mark, V
from ..ops import torch_api as T
from ..source.nodes import holds
from ..source.program import SourceFile
from . import model as M

# the interpreter's context: ("root", n), ("call", node, fn, sf), ("loop", node, seq, sf, run, oid) entries
Ctx = tuple[tuple[Any, ...], ...]
# what _stale_uses finds for a backward(): (kind, the earlier BackwardRec, from an earlier iteration,
# a saved tensor changed in place since, the SaveRec, the CarryRec that carried it)
StaleUse = tuple[str, BackwardRec, bool, bool, SaveRec, CarryRec | None, bool, bool]


class Builder:
    def __init__(self, path: str):
        self.path = path
        self._params: dict[int, M.Param] = {}
        self._param_sets: dict[frozenset, frozenset[M.Param]] = {}
        self._spans: dict[tuple[int, int], M.Span] = {}
        self._optims: dict[int, M.Optimizer] = {}
        self._resets: dict[int, list[int]] = {}  # unit oid -> seqs of reset_parameters() reaching it
        self._literals: dict[tuple, frozenset[tuple[int, bool]]] = {}  # event path -> its closed literals
        self._atoms: dict[tuple, int] = {}
        # (event seq, depth) -> the model's Event: the steps of one loop share its iteration's events
        # (timm's 48 backwards converted the same 550 events each)
        self._events: dict[tuple[int, int], M.Event] = {}
        self._trace: Trace | None = None
        self._both: set | None = None  # see _on_both_arms
        # module oid -> its parameters: the trees are final once the run is over, and the unseen
        # calls of a large model (thousands) hand over the same modules again and again
        self._module_units: dict[int, frozenset[Unit]] = {}

    # ------------------------------------------------------------ leaves

    @overload
    def span(self, site: Site) -> M.Span: ...
    @overload
    def span(self, site: None) -> None: ...
    @overload
    def span(self, site: Site | None) -> M.Span | None: ...
    def span(self, site: Site | None) -> M.Span | None:
        if site is None:
            return None
        node = site.node
        key = (id(site.mod), id(node))  # one node may be met through Sites of two files (a mixed Site)
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
            p = M.Param(
                u.oid,
                u.name,
                u.module_path,
                u.kind,
                self.span(u.site),
                _origin(u),
                u.created_in_loop and u.in_init,
                is_closed(u),
                u.created_in_loop,
            )
            self._params[u.oid] = p
        return p

    def params(self, units: Iterable[Unit]) -> frozenset[M.Param]:
        if not isinstance(units, frozenset):
            units = frozenset(units)
        # the same set of leaves recurs on thousands of events (every op of a step, every step's
        # trained and frozen leaves): one Param set for each, built once, instead of a Param
        # looked up for every leaf again
        out = self._param_sets.get(units)
        if out is None:
            out = self._param_sets[units] = frozenset(self.param(u) for u in units)
        return out

    def optimizer(self, o: OptimObj) -> M.Optimizer:
        m = self._optims.get(o.oid)
        if m is None:
            groups = tuple(
                M.Group(
                    self.params(g.units),
                    g.exact,
                    g.filtered,
                    self.span(g.site),
                    tuple(g.options),
                    g.from_arg,
                    tuple(sorted(s.path() for s in g.sources)),
                )
                for g in o.groups
            )
            loops = [c for c in o.ctx if c[0] == "loop"]
            units = o.units()
            # made in this iteration of its loop, or re-initialised in it (`model.reset_parameters()` per run)
            fresh = (
                bool(loops)
                and bool(units)
                and all(u.seq > loops[-1][2] or self._reset_after(u, loops[-1][2], o.seq) for u in units)
            )
            m = M.Optimizer(
                o.oid,
                o.label,
                o.type_name(),
                self.span(o.site),
                o.seq,
                groups,
                o.complete,
                bool(loops),
                o.escaped,
                fresh,
                _loops(o.ctx),
                o.stateless,
                not o.complete and o.args_only,
                o.duck,
                o.assumed,
            )
            self._optims[o.oid] = m
        return m

    def _in_file(self, sf: SourceFile, node: object) -> bool:
        """`node` is one of `sf`'s (a value's site is a bare node: the loss may be computed in a helper
        of another file, and a Site must not pair that node with the backward's file)."""
        return holds(sf.tree, node)

    def _reset_after(self, u: Unit, start: int, end: int) -> bool:
        return any(start < seq < end for seq in self._resets.get(u.oid, ()))

    def cuts(self, cuts: Iterable[CutRec]) -> tuple[M.Cut, ...]:
        # (kind, cut node) -> [kind, site, detail, removed, removed_weak, top, receiver, note, role]
        merged: dict[tuple[str, int], list[Any]] = {}
        for c in cuts:
            key = (c.kind, id(c.site.node))
            prev = merged.get(key)
            if prev is None:
                merged[key] = [
                    c.kind,
                    c.site,
                    c.detail,
                    set(c.removed),
                    set(c.removed_weak),
                    c.top,
                    c.receiver,
                    c.note,
                    c.role,
                ]
            else:
                prev[3] |= c.removed
                prev[4] |= c.removed_weak
                prev[5] = prev[5] or c.top
                if prev[8] != c.role:
                    prev[8] = ""
        out = []
        for kind, site, detail, removed, weak, top, receiver, note, role in merged.values():
            out.append(
                M.Cut(
                    kind,
                    self.span(site),
                    detail,
                    self.params(removed),
                    self.params(weak - removed),
                    top,
                    self.span(Site(site.mod, receiver)) if receiver is not None else None,
                    note,
                    role,
                )
            )
        out.sort(key=lambda c: (c.span.path, c.span.line, c.span.col))
        return tuple(out)

    # ------------------------------------------------------------ the model

    def build(self, trace: Trace) -> M.ProgramModel:
        self._trace, self._both = trace, None
        for oids, seq in trace.resets:
            for oid in oids:
                self._resets.setdefault(oid, []).append(seq)
        # an autocast region whose tagged values reach no backward is not a training one (interpreter.py)
        used = {r for rec in trace.backwards for r in rec.loss.risks}
        events = [
            e
            for e in trace.events
            if not (e.kind == EventKind.AUTOCAST and isinstance(e.obj, RiskRec) and e.obj not in used)
        ]
        unfrozen_units = {u.oid for f in trace.freezes if f.value for u in f.units}
        steps = []
        seqs = sorted(rec.seq for rec in trace.backwards)
        manual: dict[int, dict[int, Unit]] = {}
        for i, rec in enumerate(sorted(trace.backwards, key=lambda r: r.seq)):
            # updated by hand from the gradient this backward() computed: before the next backward()
            end = seqs[i + 1] if i + 1 < len(seqs) else None
            manual[rec.seq] = {
                u.oid: u for u, _, seq in trace.manual_updates if seq > rec.seq and (end is None or seq < end)
            }
        for rec in trace.backwards:
            same = _iteration(events, rec)[0]
            # a backward() whose gradient is applied by hand right after (`w.sub_(w.grad)` per
            # evaluation network) feeds that update, not an optimizer stepped later around its loop
            own = _stepped_in(same, rec, window_only=True)
            if own or not manual[rec.seq]:
                own = _stepped(same, rec, events)
            rec.stepped_objs = tuple(own)
        stale = _stale_uses(
            trace.backwards,
            trace.carries,
            trace.maybe_cleared | trace.element_saves,
            sorted(e.seq for e in trace.events if e.kind == EventKind.STEP),
            self.literals,
            trace.empty_loop_saves,
        )
        for rec in sorted(trace.backwards, key=lambda r: r.seq):
            mine = manual[rec.seq]
            steps.append(self.step(rec, events, unfrozen_units, mine, stale.get(rec, ())))
        steps.sort(key=lambda s: s.seq)
        steps = _share_accumulated(steps)
        freezes = tuple(
            M.Freeze(
                self.params(f.units),
                self.span(f.site),
                self.span(f.anchor),
                f.value,
                f.strong,
                f.seq,
                tuple(sorted(_target_name(t) for t in f.targets)),
            )
            for f in trace.freezes
        )
        # a rebinding whose value is made a leaf again (in a later pass of its loop) loses nothing
        releafed = {self.span(r.site) for r in trace.inplace if r.kind == InplaceRec.REBIND and r.releafed}
        updates = tuple(
            M.LeafUpdate(
                self.span(r.site),
                r.kind,
                self.params(r.units),
                r.nograd,
                r.detail or "",
                r.detail or "",
                any(c[0] == "loop" for c in r.ctx),
                r.through,
            )
            for r in trace.inplace
            if r.kind in (InplaceRec.LEAF, InplaceRec.REBIND)
            and not (r.kind == InplaceRec.REBIND and self.span(r.site) in releafed)
        )
        unregs = tuple(
            M.Unregistered(
                self.span(r.site),
                r.owner.path(),
                r.owner.type_name(),
                r.attr,
                r.kind,
                self.params(hidden),
                r.fresh,
                self.span(Site(r.site.mod, r.value_node)) if r.value_node is not None else None,
            )
            for r in trace.unregs
            # what the module registers by the end of the run (`self.heads = nn.ModuleList(self.heads)`
            # after filling the list, a list of layers also held by a registered block) is not hidden
            if (hidden := _hidden(r))
        )
        new = tuple(M.NewParams(self.span(n.site), self.params(n.units), n.seq, n.in_loop) for n in trace.new_units)
        optims = tuple(self.optimizer(o) for o in trace.optimizers)
        used = set()
        for rec in trace.backwards:
            # a stored part's history backpropagated in the iteration that stored it is the step's own
            # loss (Lightning's `training_step_outputs.append(log)`), still kept by the container
            used |= {t for t in rec.loss.terms if not (isinstance(t, AccRec) and t.held and _same_iteration(t, rec))}
        scheds = tuple(
            M.Scheduler(
                s.oid,
                s.label,
                s.qual.rsplit(".", 1)[-1],
                self.span(s.site),
                s.optimizer.oid if s.optimizer is not None else 0,
                s.counter,
            )
            for s in {e.obj.oid: e.obj for e in events if e.kind == EventKind.SCHED_NEW}.values()
        )
        accs: dict = {}
        for a in trace.accums:
            prev = accs.get(id(a.site.node))
            back = a in used or (prev is not None and prev[1])
            # the iterations outlived, over every run of the loops (a loop's runs have their own keys)
            outlived = a.outlived
            if prev is not None and prev[2] is not None and outlived is not None:
                outlived = prev[2] + tuple(o for o in outlived if o not in prev[2])
            elif prev is not None and (prev[2] is None) != (outlived is None):
                outlived = None  # one record does not know: the innermost, as for any record
            accs[id(a.site.node)] = (a, back, outlived)
        return M.ProgramModel(
            self.path,
            tuple(steps),
            optims,
            freezes,
            updates,
            unregs,
            new,
            self.params(u for u, _, _ in trace.manual_updates),
            trace.incomplete,
            losses=self.losses(trace),
            events=tuple(self.event(e, 0) for e in events),
            schedulers=scheds,
            accumulations=tuple(
                M.Accumulation(
                    self.span(a.site),
                    self.params(a.org),
                    back,
                    _loops(a.ctx),
                    a.tensor,
                    None if outlived is None else tuple((k, self.span(s)) for k, s in outlived),
                    self.span(a.handed) if a.handed is not None else None,
                    a.keeper,
                    self.span(a.reset) if a.reset is not None else None,
                )
                for a, back, outlived in accs.values()
            ),
            crossings=tuple(
                M.Crossing(
                    c.seq,
                    self.span(c.site),
                    self.params(c.own),
                    self.params(c.foreign),
                    _loops(c.ctx),
                    self.span(c.arg),
                )
                for c in trace.crossings
            ),
            scores=tuple(
                M.ScoreWeight(
                    self.span(s.site),
                    self.params(s.units),
                    tuple(rec.seq for rec in trace.backwards if s.token in rec.loss.risks),
                )
                for s in trace.scores
            ),
            regressed=self.params(trace.regressed),
            counters=(counters := _counters(trace, events)),
            counter_kinds=_counter_kinds(trace, counters),
            flags=_flags(trace, events),
            risks=self.risks(trace),
            unit_inplace=self.unit_inplace(trace),
            unit_new=self.unit_new(trace),
            unit_cuts=self.unit_cuts(trace),
            split_writes=tuple(_split_writes(self, trace)),
            nonleaf=tuple(
                M.NonLeaf(self.span(n.site), self.span(n.stmt), self.params([n.unit]), n.use)
                for n in {(id(n.site.node), n.use): n for n in trace.nonleaf}.values()
            ),
            grad_reads=tuple(
                M.GradRead(
                    self.span(g.site),
                    self.span(g.stmt),
                    self.params(g.org),
                    _loops(g.ctx),
                    frozenset(self.span(s.site) for s in g.storages),
                )
                for g in trace.grad_reads
            ),
            libraries=_library_modules(trace),
            unseen=tuple(self.unseen(u) for u in trace.unseen),
            written=self.params(_updates(trace.writes, events)),
            grad_fed=self.params(trace.grad_writes),
            grad_set=self.params(trace.grad_sets),
            grad_read=self.params(trace.leaf_grad_reads),
            ran=frozenset(trace.ran),
            # walked only where asked (an optimizer whose groups are not fully known), not per keystroke
            handed=(
                self.params(_handed(trace))
                if any(not o.complete for o in optims) and not any(u.everything for u in trace.unseen)
                else None
            ),
        )

    def unseen(self, rec: UnseenRec) -> M.Unseen:
        units: set[Unit] = set()
        optims: set[int] = set()
        for o in rec.objs:
            if isinstance(o, Unit):
                units.add(o)
            elif isinstance(o, ModuleObj):
                held = self._module_units.get(o.oid)
                if held is None:
                    held = self._module_units[o.oid] = frozenset(o.units())
                units |= held
            elif isinstance(o, PIter):
                units |= o.units
            elif isinstance(o, OptimObj):
                optims.add(o.oid)
                units |= o.units()
        return M.Unseen(
            rec.kind,
            self.span(rec.site),
            rec.detail if len(rec.detail) <= 60 else rec.detail[:57] + "...",
            rec.seq,
            self.params(units),
            frozenset(optims),
            _loops(rec.ctx),
            rec.everything,
        )

    def risks(self, trace: Trace) -> tuple[M.Risk, ...]:
        """One Risk per (code, place): reached when any evaluation of it flows into a backward()."""
        used: set[RiskRec] = set()
        for rec in trace.backwards:
            loops = _loops(rec.ctx)
            # a constant made outside the step's loop (class weights from counts, dataset statistics) is
            # data preparation, out of the numerical rules' scope (rules.md conventions)
            used |= {r for r in rec.loss.risks if not (r.constant and _outer(_loops(r.ctx), loops))}
        alone: dict[RiskRec, str] = {}  # reaching the result of a forward run on its own
        for out, label, *_ in trace.units:
            for r in _risks_in(out):
                # not from a unit alone: operands that carry no gradient (`eye(n) / eye(n).norm()`, data),
                # and a masked softmax (GA406), whose rows are empty or not as the caller's mask says
                if not r.constant and r.code != "GA406":
                    alone.setdefault(r, label)
        by_key: dict[tuple[str, int], tuple[RiskRec, bool]] = {}
        units: dict[tuple[str, int], str] = {}
        for r in trace.risks:
            key = (r.code, id(r.site.node))
            prev = by_key.get(key)
            reached = r in used or (prev is not None and prev[1])
            by_key[key] = (prev[0] if prev is not None else r, reached)
            if r in alone:
                units.setdefault(key, alone[r])
        out = []
        for key, (r, reached) in by_key.items():
            if reached or key not in units:
                out.append(M.Risk(r.code, self.span(r.site), r.detail, r.confidence, reached, _loops(r.ctx)))
            else:
                # no step reaches it: the unit alone shows the hazard, its use in training decides
                out.append(
                    M.Risk(
                        r.code, self.span(r.site), r.detail, SUSPICIOUS, True, _loops(r.ctx), units[key], _within(r.ctx)
                    )
                )
        return tuple(out)

    def inplace_hits(
        self, saves: frozenset, versions: dict, certain: bool = True, within: Site | None = None, methods: tuple = ()
    ) -> list[M.InplaceHit]:
        """The in-place changes, made after the save and by `versions` (SaveRec -> the storage's
        version then), to tensors a differentiable op saved for the graph of a value; only saves
        known to be made (a parameter requiring grad flows in) when `certain`; when `within` is
        given, only saves written in its file and changes written in the function at `within`; a save
        in one of `methods` (the Sites of its own class's other methods) counts as the function's own."""
        hits = []
        # a change of one of several candidates hits a saved one only when each was saved before it
        # (for a proof, certainly saved: a save of a value that was only maybe that tensor proves
        # nothing); storage -> the versions it was saved at
        saved: dict = {}
        for s in saves:
            if s.certain or not certain:
                saved.setdefault(s.storage, []).append(s.version)
        for s in saves:
            storage = s.storage
            if not isinstance(storage, TensorObj) or (certain and not s.certain):
                continue
            # (never the saving op itself run again by a loop: `x[i] = relu_(x[i])` over a list's
            # elements, which the engine joins, changes each one once)
            # a save in the unit, or in the forward of a block that the unit runs (whose output a
            # later in-place layer of the unit changes), with the change in the unit; or a save and
            # its change in one function of the unit's file (a block's forward, a loss method), not
            # split across helpers, whose arms, joined, may alias what another arm saved. Outside
            # the unit and its blocks' forwards, only a save certainly made: one a parameter's
            # gradient needs, not one needing the made-up inputs to require grad (a model's data
            # does not)
            own = within is not None and (_inside(s.site, within) or _in_block_forward(s, within))
            # a save a parameter needs, in another method of the unit's own class (a template
            # method's `forward_cell`), changed in the unit itself
            mine = not own and s.certain and any(_inside(s.site, m) for m in methods)
            home = (
                _function_of(s.site) if within is not None and s.site.mod is within.mod and (own or s.certain) else None
            )
            if within is not None and not own and not mine and home is None:
                continue
            now = versions.get(s, storage.version)
            if now > s.version:
                for version, site, path, group in storage.bumps:
                    # a change on the other arm of a condition the save was made under never follows it
                    if (
                        s.version < version <= now
                        and not _arms_exclusive(s.path, path)
                        and _same_candidates(s.path, path)
                        and (
                            within is None
                            or ((own or mine) and _inside(site, within) and site.node is not s.site.node)
                            or (
                                home is not None
                                and site.mod is within.mod
                                and site.node is not s.site.node
                                and _function_of(site) is home
                            )
                        )
                        # the other candidates may be the one that changed
                        and all(any(v < version for v in saved.get(g, ())) for g in group)
                        and not (_detached_in_place(site) and s.op in T.SAVES_OUTPUT)
                        and not _carried_in_and_out(s, site)
                    ):
                        hits.append(M.InplaceHit(self.span(site), self.span(s.site), s.op))
                        # `out += x; out = relu_(out)`: the later changes of a tensor already
                        # changed are not defects of their own (the first, written out of place,
                        # leaves them a fresh tensor to change)
                        break
        return hits

    def unit_new(self, trace: Trace) -> tuple[tuple[M.Span, frozenset[M.Param], str], ...]:
        """The layers forwards run alone build and apply, one per statement (interp Trace.unit_new)."""
        out: dict[M.Span, tuple[M.Span, frozenset[M.Param], str]] = {}
        for site, units, label in trace.unit_new:
            span = self.span(site)
            out.setdefault(span, (span, self.params(units), label))
        return tuple(out.values())

    def unit_cuts(self, trace: Trace) -> tuple[tuple[M.Cut, str], ...]:
        """The constant terms of units run alone (interp Trace.unit_cuts), one per cut."""
        out: dict[M.Span, tuple[M.Cut, str]] = {}
        for rec, label in trace.unit_cuts:
            for cut in self.cuts([rec]):
                out.setdefault(cut.span, (cut, label))
        return tuple(out.values())

    def unit_inplace(self, trace: Trace) -> tuple[tuple[M.InplaceHit, str], ...]:
        """In-place changes of saved tensors in the graph of a forward (or loss function) run on its
        own: a backward through its result raises, whatever step uses it."""
        out: dict = {}
        for value, label, versions, fn, methods in trace.units:
            # the unit's inputs are taken to require grad (they may not: the finding is suspicious),
            # so what their flow makes ops save counts; but only a save and a change both in the
            # unit's own code, where the changed tensor is the saved one (not a result of a nested
            # module whose arms, joined, may alias what one arm saved)
            for hit in self.inplace_hits(value.saves, versions, certain=False, within=fn, methods=methods):
                out.setdefault(hit.span, (hit, label))
        return tuple(out.values())

    def losses(self, trace: Trace) -> tuple[M.LossTerm, ...]:
        """One LossTerm per statement: backpropagated when any evaluation of it reached a backward."""
        used: set[LossRec] = set()
        for back in trace.backwards:
            used |= back.loss.terms
            for c in back.loss.cuts:  # reached the loss, but through a cut: the cut is the defect
                used |= c.terms
        by_site: dict[int, list[Any]] = {}  # statement node -> [LossRec, leaves, backpropagated]
        for rec in trace.losses:
            key = id(rec.site.node)
            entry = by_site.get(key)
            if entry is None:
                by_site[key] = entry = [rec, set(), False]
            entry[1] |= rec.org
            entry[2] = entry[2] or rec in used
        return tuple(
            M.LossTerm(self.span(rec.site), rec.label, rec.func, self.params(org), back, hash(_loop_prefix(rec.ctx)))
            for rec, org, back in by_site.values()
        )

    def step(
        self,
        rec: BackwardRec,
        events: list[EventRec],
        unfrozen_units: set[int],
        manual_units: dict[int, Unit],
        stale: Iterable[StaleUse] = (),
    ) -> M.Step:
        loss = rec.loss
        same, loop_prefix = _iteration(events, rec)
        stepped_objs = list(rec.stepped_objs)
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
        trained |= set(manual_units.values())
        frozen = {u for u, st in rec.frozen.items() if st == FROZEN}
        maybe = {u for u, st in rec.frozen.items() if st == MAYBE}
        trained -= frozen
        hits = self.inplace_hits(loss.saves, rec.versions)
        fresh = []
        for u in loss.org:
            if u.kind == Unit.FRESH:
                fresh.append((self.param(u), self.cuts(u.source_cuts)))
        inputs: frozenset = frozenset()
        if rec.inputs is not None:
            inputs = self.params(o for o in rec.inputs.objs if isinstance(o, Unit)) | self.params(
                u for it in (rec.inputs.items or ()) for u in it.objs if isinstance(u, Unit)
            )
            # `loss.backward(inputs=list(actor.parameters()))`: a list of parameters (for
            # autograd.grad the inputs stay what is known one by one: a list filtered by index
            # (`if i not in skip: params.append(p)`) holds more than it may)
            held = [
                o.content
                for o in rec.inputs.objs
                if isinstance(o, ListObj) and o.content is not None and rec.kind == EventKind.BACKWARD
            ]
            inputs |= self.params(u for c in held for u in c.objs if isinstance(u, Unit))
            inputs |= self.params(u for c in held for pi in c.objs if isinstance(pi, PIter) for u in pi.units)
        loop_span = None
        if loop_prefix and loop_prefix[-1][0] == "loop":
            loop_span = self.span(Site(_site_mod(rec, loop_prefix), loop_prefix[-1][1]))
        ev = tuple(self.event(e, len(loop_prefix)) for e in same)
        return M.Step(
            span=self.span(rec.site),
            kind=rec.kind,
            function=rec.func,
            loss=rec.loss_expr,
            loss_span=self.span(Site(rec.site.mod, loss.site))
            if loss.site is not None and hasattr(loss.site, "lineno") and self._in_file(rec.site.mod, loss.site)
            else None,
            reached=self.params(loss.org),
            reached_weak=self.params(loss.weak - loss.org),
            top=loss.top,
            # a parameter made from a value that carried gradient (`nn.Parameter(W)` in a forward)
            # brings the cut that made it: W's history is not the loss's
            cuts=self.cuts(loss.cuts | frozenset(c for u in loss.org if u.kind == Unit.PARAM for c in u.source_cuts)),
            optimizers=tuple(self.optimizer(o) for o, _, _ in rec.optimizers),
            stepped=tuple(o.oid for o in stepped_objs),
            trained=self.params(trained),
            trained_known=known,
            frozen=self.params(frozen),
            maybe_frozen=self.params(maybe),
            unfrozen_later=self.params(u for u in frozen | maybe if u.oid in unfrozen_units),
            inputs=inputs,
            inplace=tuple(hits),
            events=ev,
            loop=loop_span,
            fresh=tuple(fresh),
            nograd=self.span(rec.nograd),
            seq=rec.seq,
            iteration=hash(loop_prefix),
            unseen=_unseen(rec, loss),
            requires_no_grad=bool(loss.facts & Fact.NOGRAD),
            retain=rec.retain,
            retain_span=self.span(Site(rec.site.mod, rec.retain_node)) if rec.retain_node is not None else None,
            gradient=rec.gradient,
            nonscalar=bool(loss.facts & Fact.UNREDUCED) or shapes.nonscalar(loss.shape),
            scaled=bool(loss.marks & Mark.SCALED),
            stale=tuple(self.stale(s) for s in stale),
            stepped_saves=self.stepped_saves(rec),
            loops=_loops(rec.ctx),
            loop_stmts=_loop_stmts(rec.ctx),
            entry="script" if rec.ctx[:1] == (("root", 1),) else "function",
            assumed=self._assumed(rec),
            in_eval=self.params(rec.in_eval),
            unseen_span=self.span(loss.unk)
            if isinstance(loss.unk, Site) and hasattr(loss.unk.node, "lineno")
            else None,
        )

    def _assumed(self, rec: BackwardRec) -> tuple[str, ...]:
        """What the run holding the step took from annotations (trace.assumed)."""
        root = rec.ctx[0] if rec.ctx else None
        if self._trace is None or not self._trace.assumed or not (root and root[0] == "root"):
            return ()
        return tuple(dict.fromkeys(t for i, t in self._trace.assumed if i == root[1]))

    def stepped_saves(self, rec: BackwardRec) -> tuple[M.SteppedSave, ...]:
        """The parameters the loss's graph saved that were changed in place after the save and
        before this backward (a GAN's D scored G's output, then D's step(), then G's backward):
        the first change of each, on a path that can run with the backward."""
        out: dict = {}
        path = tuple(rec.event.path) if rec.event is not None else ()
        # the few saves of changed parameters, in source order (not every save of the loss sorted
        # again: _stale_uses already sorts them for each backward)
        empty_loop = self._trace.empty_loop_saves if self._trace is not None else ()
        changed = [
            s
            for s in rec.loss.saves
            if s.certain
            and s not in empty_loop  # reached only if a loop runs no iteration
            and isinstance(s.storage, Unit)
            and s.storage.kind == Unit.PARAM
            and rec.versions.get(s, s.storage.version) > s.version
        ]
        for s in sorted(changed, key=_save_order):
            u = s.storage
            if u in out:
                continue
            now = rec.versions.get(s, u.version)
            for version, site, bpath, _ in u.bumps:
                if s.version < version <= now and not _arms_exclusive(path, bpath):
                    out[u] = M.SteppedSave(self.span(site), self.span(s.site), self.param(u))
                    break
        return tuple(out.values())

    def stale(self, s: StaleUse) -> M.Stale:
        kind, by, earlier, modified, save, carry, before_loop, empty_loop = s
        return M.Stale(
            kind,
            by.event.seq,
            self.span(by.site),
            earlier,
            modified,
            self.span(save.site),
            self.span(carry.site) if carry is not None else None,
            tuple(o.oid for o in by.stepped_objs),
            before_loop,
            empty_loop,
        )

    def event(self, e: EventRec, depth: int) -> M.Event:
        made = self._events.get((e.seq, depth))
        if made is None:
            made = self._events[(e.seq, depth)] = self._event(e, depth)
        return made

    def _event(self, e: EventRec, depth: int) -> M.Event:
        target, key = "", 0
        o = e.obj
        if o is not None and hasattr(o, "label"):
            target, key = o.label, o.oid
        elif o is not None and hasattr(o, "oid"):
            key = o.oid
        via = tuple(self.span(Site(_mod_of(c), c[1])) for c in e.ctx[depth:] if c[0] == "call" and _mod_of(c))
        level = sum(1 for c in e.ctx[:depth] if c[0] == "loop")
        both = self._on_both_arms()
        ident = _identity(e)
        conds = _conds(e)
        # a branch whose two arms both run this call (`if single: run(a) else: run(b)`, one function
        # doing the step) does not condition it
        shared = frozenset(k for k, _, _ in conds if (ident, k) in both)
        guarded = any(lvl >= level for k, _, lvl in conds if k not in shared)
        return M.Event(
            e.kind,
            self.span(e.site),
            e.seq,
            target,
            key,
            guarded,
            tuple(v for v in via if v),
            e.detail or "",
            self.params(e.units) if e.units else frozenset(),
            _loops(e.ctx),
            conds,
            self.literals(e.path),
            shared,
        )

    def _on_both_arms(self) -> set:
        """(event identity, branch key) for the calls made on both arms of an `if`."""
        found = self._both
        trace = self._trace
        if found is None and trace is not None:
            arms: dict[tuple, set[int]] = {}
            for e in trace.events:
                ident = _identity(e)
                for key, arm, _ in e.path:
                    arms.setdefault((ident, key), set()).add(arm)
            found = self._both = {k for k, seen in arms.items() if {0, 1} <= seen}
            # a call analysed once for both arms (repeats.py)
            for first, end, keys in trace.shared_arms:
                found.update((_identity(e), key) for e in trace.events[first:end] for key in keys)
        return found or set()

    def literals(self, path: tuple) -> frozenset[tuple[int, bool]]:
        """The settings an event's conditions hold (true or false), closed under what a setting's
        truth implies: under `if self.use_amp:` also `args.deepspeed` false when `use_amp` is set
        only under `if args.fp16 and not args.deepspeed:` (interp/settings.py)."""
        found = self._literals.get(path)
        if found is not None:
            return found
        trace = self._trace
        out: frozenset = frozenset()
        if trace is not None and trace.branch_literals:
            lits = settings.closed(trace.implies, settings.held(trace.branch_literals, path))
            out = frozenset((self._atoms.setdefault(a, len(self._atoms)), t) for a, t in lits)
        self._literals[path] = out
        return out


def _hidden(r: Any) -> list[Unit]:
    """The leaves an unregistered container really hides: not in its owner's tree at the end, and not
    registered by some module of their own (a list filled, then wrapped in an nn.ModuleList on one arm
    of a branch; layers also held by a registered block)."""
    registered = {u.oid for u in r.owner.units()}
    return [
        u
        for u in r.units
        if u.oid not in registered and (r.kind == "tensor" or u.owner is r.owner or not _registered_elsewhere(u))
    ]


def _registered_elsewhere(u: Unit) -> bool:
    m = u.owner if isinstance(u.owner, ModuleObj) else None
    hops = 0
    while m is not None and hops < 32:
        if m.key is not None and str(m.key).endswith("[]"):
            return False  # named after the plain container that holds it: nothing registered it
        if m.parent is None:
            return hops > 0
        m = m.parent
        hops += 1
    return False


def _updates(writes: list, events: list[EventRec]) -> set[Unit]:
    """Leaves changed in place in a loop iteration that also trains (runs a backward() or a step()):
    updates, like a target network's soft update or an EMA's; an initialisation runs before training."""
    kinds = (EventKind.BACKWARD, EventKind.GRAD, EventKind.STEP)
    trains = {e.ctx[: i + 1] for e in events if e.kind in kinds for i, c in enumerate(e.ctx) if c[0] == "loop"}
    # a method run on its own (nothing in the file calls it: `learn()` of an agent, its backward() and
    # its soft update side by side) is one training step too
    trains |= {e.ctx[:1] for e in events if e.kind in kinds and e.ctx[:1] != (("root", 1),)}
    out = set()
    for u, _, ctx in writes:
        if any(c[0] == "loop" and ctx[: i + 1] in trains for i, c in enumerate(ctx)) or ctx[:1] in trains:
            out.add(u)
    return out


def _target_name(t: Obj) -> str:
    path = getattr(t, "path", None)
    name: str = path() if path is not None else getattr(t, "name", "?")
    return name


def _risks_in(v: V) -> set:
    """The hazards a forward's result carries: the value's own, its tuple items' and the elements
    of the lists and dicts it returns (one level: `return out, aux`, `return {"loss": l}`)."""
    out = set(v.risks)
    for item in v.items or ():
        if isinstance(item, V):
            out |= item.risks
    for o in v.objs:
        elems = o.values() if isinstance(o, DictObj) else (o.elems or ()) if isinstance(o, ListObj) else ()
        for elem in elems:
            if isinstance(elem, V):
                out |= elem.risks
    return out


def _detached_in_place(site: Site) -> bool:
    """The change is `x.detach_()`: it breaks saves of x as an op's input, not as its output."""
    node = site.node
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach_"


def _outer(inner_loops: tuple[int, ...], loops: tuple[int, ...]) -> bool:
    """`inner_loops` (a value's) are a strict prefix of `loops` (a backward's): made before the loop."""
    return len(inner_loops) < len(loops) and loops[: len(inner_loops)] == inner_loops


def _loops(ctx: Ctx) -> tuple[int, ...]:
    """Keys of the loop iterations in a context, outermost first (equal keys: the same iteration)."""
    out, n = [], 0
    for i, c in enumerate(ctx):
        if c[0] == "loop":
            out.append(hash(ctx[: i + 1]))
            n += 1
    return tuple(out)


def _loop_stmts(ctx: Ctx) -> tuple[int, ...]:
    """Keys of the loop statements of a context, outermost first (any iteration of one loop: one key)."""
    return tuple(hash((c[3].abspath, c[1].lineno, c[1].col_offset)) for c in ctx if c[0] == "loop")


def _identity(e: EventRec) -> tuple:
    """One lifecycle call of the code, whichever run made it: its kind, its place, and the optimizer
    or scheduler it concerns (a backward's record is per run)."""
    o = e.obj
    return (e.kind, id(e.site.node) if e.site is not None else None, getattr(o, "oid", None))


def _conds(e: EventRec) -> tuple[tuple[int, int, int], ...]:
    """(branch key, arm, loop level) for each condition an event ran under: the level is how many
    loop iterations enclosed the branch (a condition inside the iteration of loop L has level >= L)."""
    out = []
    for key, arm, depth in e.path:
        out.append((key, arm, sum(1 for c in e.ctx[:depth] if c[0] == "loop")))
    return tuple(out)


def _unseen(rec: BackwardRec, loss: V) -> str:
    """What the engine did not see of the loss: the source of the first unseen part, or '?'."""
    if not loss.unk or loss.facts & Fact.NOGRAD:
        return ""
    site = loss.unk
    if isinstance(site, Site) and hasattr(site.node, "lineno"):
        text = " ".join(site.mod.segment(site.node).split())
        if text:
            return text if len(text) <= 60 else text[:57] + "..."
    return "?"


def _share_accumulated(steps: list[M.Step]) -> list[M.Step]:
    """Losses backpropagated in one iteration for the same optimizer step add up their gradients."""
    from ..source.prebuilt import replace

    groups: dict[tuple[int, int], list[int]] = {}
    for i, st in enumerate(steps):
        for key in st.stepped:
            groups.setdefault((st.iteration, key), []).append(i)
    extra: dict[int, frozenset[M.Param]] = {}
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


def _mod_of(ctx_entry: tuple[Any, ...]) -> SourceFile | None:
    """The file of a call-site node in a ctx entry: ('call', node, fn, sf)."""
    sf: SourceFile | None = ctx_entry[3] if len(ctx_entry) > 3 else None
    return sf


def _site_mod(rec: BackwardRec, prefix: Ctx) -> SourceFile:
    entry = prefix[-1]
    sf: SourceFile = entry[3] if len(entry) > 3 else rec.site.mod
    return sf


def _loop_prefix(ctx: Ctx) -> Ctx:
    """The context up to the innermost loop iteration (or the root), identifying one iteration."""
    for i in range(len(ctx) - 1, -1, -1):
        if ctx[i][0] == "loop":
            return ctx[: i + 1]
    return ctx[:1]


def _iteration(events: list[EventRec], rec: BackwardRec) -> tuple[list[EventRec], Ctx]:
    """Events of the loop iteration holding the backward (or of its whole run), and that prefix."""
    prefix = _loop_prefix(rec.ctx)
    n = len(prefix)
    same = [e for e in events if e.ctx[:n] == prefix]
    return same, prefix


def _stepped(same: list[EventRec], rec: BackwardRec, events: list[EventRec] | None = None) -> list[Any]:
    """The optimizers this backward feeds: stepped after it (before the next backward), else in its
    iteration, else after it in the enclosing iterations (a backward per micro-batch in an inner
    loop, one step after it)."""
    found = _stepped_in(same, rec)
    if found or events is None:
        return found
    ctx = rec.ctx
    loops = [i for i, c in enumerate(ctx) if c[0] == "loop"]
    for i in reversed(loops[:-1] if loops else []):
        prefix = ctx[: i + 1]
        outer = [e for e in events if e.ctx[: len(prefix)] == prefix and e.seq > rec.event.seq]
        objs = []
        for e in outer:
            if e.kind == EventKind.STEP and e.obj is not None and e.obj not in objs:
                objs.append(e.obj)
        if objs:
            return objs
    return []


def _stepped_in(same: list[EventRec], rec: BackwardRec, window_only: bool = False) -> list[Any]:
    after = [e for e in same if e.seq > rec.event.seq]
    window = []
    for e in after:
        if e.kind in (EventKind.BACKWARD, EventKind.GRAD) and e.obj is not rec:
            break
        window.append(e)
    for pool in (window,) if window_only else (window, after, same):
        objs = []
        for e in pool:
            if e.kind == EventKind.STEP and e.obj is not None and e.obj not in objs:
                objs.append(e.obj)
        if objs:
            return objs
    return []


def _save_order(s: SaveRec) -> tuple[str, int, int, int]:
    node = s.site.node if s.site is not None else None
    return (
        getattr(getattr(s.site, "mod", None), "path", ""),
        getattr(node, "lineno", 0),
        getattr(node, "col_offset", 0),
        s.version,
    )


def _stale_uses(
    backwards: list[BackwardRec],
    carries: list[CarryRec],
    maybe_cleared: set | frozenset = frozenset(),
    steps: list[int] | None = None,
    literals: Any = None,
    empty_loop: set | frozenset = frozenset(),
) -> dict[BackwardRec, list[StaleUse]]:
    """For each backward(), the graph it reaches that an earlier backward() freed (torch raises
    "Trying to backward through the graph a second time") or kept alive with retain_graph=True
    across iterations: one entry per earlier backward, (kind, that BackwardRec, from an earlier
    iteration, a saved tensor changed in place since, a SaveRec, the CarryRec that carried it)."""
    freed: dict[SaveRec, BackwardRec] = {}
    retained: dict[SaveRec, BackwardRec] = {}
    out: dict[BackwardRec, list[StaleUse]] = {}
    for rec in sorted(backwards, key=lambda r: r.seq):
        # in source order: the save a finding names must not depend on where objects sit in memory
        saves = sorted(rec.loss.saves, key=_save_order)
        found: dict[tuple[str, int], list[Any]] = {}  # -> [*StaleUse, the SaveRecs it reaches]
        for s in saves:
            if not s.certain or s in maybe_cleared:
                continue
            by = freed.get(s)
            kind = "freed"
            if by is None:
                by = retained.get(s)
                kind = "retained"
                if by is None or by is rec:
                    continue
            earlier = _earlier_iteration(s, rec)
            modified = _changed_before(s, rec)
            before = kind == "retained" and not earlier and _before_loop(s, by, rec)
            if before and steps is not None and not _stepped_between(steps, by.event.seq, rec.event.seq):
                # one forward backpropagated once per class, row or sample of a loop with no step()
                # in it (a Fisher estimate, a Jacobian): what retain_graph is for, whatever the code
                # after the loop steps
                continue
            # a retained graph reused in the same iteration is what retain_graph is for, unless a
            # step() changed a tensor it saved in between (then torch raises), or it was built before
            # the loop whose every iteration reaches it again
            if kind == "retained" and not (earlier or modified or before):
                continue
            if _exclusive(by.event, rec.event):
                continue  # the two backward() calls are on different arms of a condition
            if literals is not None and _settings_exclusive(literals, by.event, rec.event):
                # on arms of two conditions on one setting that cannot hold together (`if opt.fp16:`
                # around the generator's backward, and again around the discriminator's)
                continue
            entry = found.get((kind, by.seq))
            if entry is None:
                found[(kind, by.seq)] = [kind, by, earlier, modified, s, None, {s}, before]
            else:
                entry[2] = entry[2] or earlier
                entry[3] = entry[3] or modified
                entry[6].add(s)
                entry[7] = entry[7] or before
        for entry in found.values():
            # the carrying assignment nearest the loop (the training code, not a forward inside it)
            hits = [c for c in carries if c.stale & entry[6]]
            if hits:
                entry[5] = min(hits, key=lambda c: len(c.ctx))
                if entry[0] == "retained" and entry[2] and not entry[3] and rec.retain:
                    # the engine runs a loop twice; a third iteration repeats the second: its loss
                    # reaches this iteration's retained graph through the same carried state, and a
                    # step() after this backward changed a parameter that graph saved (a recurrent
                    # cell's weights, saved once the carried state requires grad): torch raises there
                    entry[3] = any(
                        s.certain and s in rec.versions and s.storage.version > rec.versions[s]
                        for c in hits
                        for s in c.held - c.stale
                    )
        if found:
            # only through a name a loop kept for the case it runs no iteration: a guess about the data
            out[rec] = [(*e[:6], e[7], e[6] <= empty_loop) for e in found.values()]
        if rec.retain:
            for s in saves:
                retained.setdefault(s, rec)
        else:
            # torch.autograd.grad(out, inputs) runs the graph from `out` down to `inputs` only: what
            # was saved below them (the encoder that made the features a gradient is taken of) is
            # neither run nor freed, and a later backward() through it works (RSC's feature mask)
            below, floor = _below_inputs(rec.inputs) if rec.kind == EventKind.GRAD else (frozenset(), 0)
            for s in saves:
                if s in below or s.born < floor:
                    continue
                freed.setdefault(s, rec)
                retained.pop(s, None)
    return out


def _below_inputs(inputs: V | None) -> tuple[frozenset, int]:
    """For torch.autograd.grad(out, inputs): what the inputs hold saved for backward (the graph
    below them, not run), and the clock reading when the oldest of them was made, when each is
    a computed or data tensor: an op that ran before it cannot be on a path from out to it (the
    target branch of a TRADES step, built before `x_adv`, is not run). 0 when any input is a
    parameter or not known (every op may be on the path)."""
    if not isinstance(inputs, V):
        return frozenset(), 0
    values = [inputs, *[i for i in inputs.items or () if isinstance(i, V)]]
    for o in inputs.objs:
        if isinstance(o, ListObj):  # `autograd.grad(loss, [x_adv])`
            values.extend(e for e in o.elems or () if isinstance(e, V))
    saves: set = set()
    stores: list = []
    for v in values:
        saves |= v.saves
        stores.extend(x for x in v.objs if not isinstance(x, ListObj))
    # a computed tensor, or a leaf made to require grad there and then (an attack's input), not a weight
    tensors = [
        x for x in stores if isinstance(x, TensorObj) or (isinstance(x, Unit) and x.kind in (Unit.INPUT, Unit.LEAF))
    ]
    floor = min(x.oid for x in tensors) if tensors and len(tensors) == len(stores) else 0
    return frozenset(saves), floor


def _same_iteration(acc: AccRec, rec: BackwardRec) -> bool:
    """The backward runs in the innermost loop iteration the accumulation was made in."""
    loops = [c for c in acc.ctx if c[0] == "loop"]
    return bool(loops) and loops[-1] in rec.ctx


def _stepped_between(steps: list[int], start: int, end: int) -> bool:
    """A step() ran between the two sequence numbers (`steps` sorted)."""
    i = bisect.bisect_right(steps, start)
    return i < len(steps) and steps[i] < end


def _before_loop(save: SaveRec, by: BackwardRec, rec: BackwardRec) -> bool:
    """`by` ran in an earlier iteration of a loop `rec` runs in, and the saved tensor was made
    before that loop: each iteration's backward goes through the same graph again (an old policy's
    log-probabilities kept from the rollout, backpropagated at every epoch of the update)."""
    by_loops = {c[1]: c[2] for c in by.ctx if c[0] == "loop"}
    saved_in = {c[1] for c in save.ctx if c[0] == "loop"}
    return any(c[0] == "loop" and c[1] in by_loops and by_loops[c[1]] < c[2] and c[1] not in saved_in for c in rec.ctx)


def _earlier_iteration(save: SaveRec, rec: BackwardRec) -> bool:
    """The saved tensor was made in an earlier iteration of a loop the backward runs in."""
    now = {c[1]: c[2] for c in rec.ctx if c[0] == "loop"}
    return any(c[0] == "loop" and c[1] in now and c[2] < now[c[1]] for c in save.ctx)


def _innermost_call(ctx: tuple) -> Any:
    """The function (FuncObj) of the innermost call in a record's context, or None."""
    return next((c[2] for c in reversed(ctx) if c[0] == "call"), None)


def _within(ctx: tuple) -> str:
    """The qualified name of the innermost function a record's context called into ('' for none)."""
    fn = _innermost_call(ctx)
    return str(fn.qual) if fn is not None else ""


def _in_block_forward(s: SaveRec, unit: Site) -> bool:
    """The save was made by an op of a module's `forward` that the unit ran: written in the unit's
    file, or in another file of its project for a block the unit holds (interp/calls.py, `_admitted`)."""
    fn = _innermost_call(s.ctx)
    return (
        fn is not None
        and getattr(fn, "name", "") == "forward"
        and getattr(fn, "cls", None) is not None
        and fn.cls.is_module
    )


def _function_of(site: Site) -> ast.AST | None:
    """The innermost function (its node) of the site's file whose code holds the site, or None."""
    line = getattr(site.node, "lineno", None)
    if line is None:
        return None
    found = None
    body = list(site.mod.tree.body)
    while body:
        nxt = []
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.lineno <= line <= (
                n.end_lineno or 0
            ):
                if not isinstance(n, ast.ClassDef):
                    found = n
                nxt = list(n.body)
                break
        body = nxt
    return found


def _inside(site: Site, fn: Site) -> bool:
    """`site` lies in the code of the function at `fn`."""
    node, outer = site.node, fn.node
    return (
        site.mod is fn.mod
        and hasattr(node, "lineno")
        and outer.lineno <= node.lineno <= (outer.end_lineno or outer.lineno)
    )


def _same_candidates(a: tuple, b: tuple) -> bool:
    """The save and the change ran in the same one of several joined modules, or outside any: a
    change in one module of `self.vgg[k]` (order not known) is not proven to follow a save made in
    another call of the joined list (interp/calls.py)."""
    return {(k, arm) for k, arm, _ in a if arm < 0} == {(k, arm) for k, arm, _ in b if arm < 0}


def _changed_before(s: SaveRec, rec: BackwardRec) -> bool:
    """The tensor `s` saved was changed in place after the save and before the backward, by a
    change that can run in the same pass as that backward (a step() on the other arm of
    `if order == 1: ... return` never precedes the backward of the `order == 2` arm)."""
    now = rec.versions.get(s, s.storage.version)
    if now <= s.version:
        return False
    path = tuple(rec.event.path) if rec.event is not None else ()
    bumps = getattr(s.storage, "bumps", None)
    if not bumps:
        return True
    return any(s.version < version <= now and not _arms_exclusive(path, bpath) for version, _, bpath, _ in bumps)


def _arms_exclusive(a: tuple, b: tuple) -> bool:
    """Two condition paths ((branch key, arm, depth), ...) on different arms of one condition."""
    arms = {k: arm for k, arm, _ in a}
    return any(k in arms and arms[k] != arm for k, arm, _ in b)


def _settings_exclusive(literals: Any, a: EventRec | None, b: EventRec | None) -> bool:
    """Two events under settings that cannot hold together (one under `opt.fp16`, one under `not
    opt.fp16`)."""
    if a is None or b is None or not a.path or not b.path:
        return False
    mine = literals(tuple(a.path))
    return bool(mine) and any((lit, not t) in mine for lit, t in literals(tuple(b.path)))


def _exclusive(a: EventRec | None, b: EventRec | None) -> bool:
    """Two events on different arms of one condition never run in the same pass."""
    if a is None or b is None:
        return False
    arms = {k: arm for k, arm, _ in a.path}
    return any(k in arms and arms[k] != arm for k, arm, _ in b.path)


def _counters(trace: Trace, events: list[EventRec]) -> frozenset[int]:
    """Branch keys, among those guarding a step(), a zero_grad(), a scheduler's step() or an
    optimizer's construction, of conditions that change from one iteration to the next (an
    accumulation counter, a one-time reset at a given step, rather than a configuration flag)."""
    kinds = (EventKind.STEP, EventKind.ZERO_GRAD, EventKind.OPT_NEW, EventKind.SCHED_STEP)
    keys = {k for e in events if e.kind in kinds for k, _, _ in e.path}
    out = set()
    for k in keys:
        test = trace.branch_tests.get(k)
        if test is not None and counter_like(*test):
            out.add(k)
    return frozenset(out)


def _counter_kinds(trace: Trace, counters: frozenset[int]) -> tuple[tuple[int, str], ...]:
    """See ProgramModel.counter_kinds."""
    return tuple(sorted((k, _counter_kind(trace.branch_tests[k][0])) for k in counters if k in trace.branch_tests))


_FLIPPED = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}  # `0 < step` is `step > 0`


def _counter_kind(test: ast.expr) -> str:
    if isinstance(test, (ast.Name, ast.Attribute)):
        return "first"  # `if step:`
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return ""
    left, op, right = test.left, type(test.ops[0]), test.comparators[0]
    if isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
        left, right, op = right, left, _FLIPPED.get(op, op)
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod):
        return "bound" if isinstance(left.right, ast.Constant) else "unknown"
    if not isinstance(right, ast.Constant):
        return "unknown"
    c = right.value
    if not isinstance(c, int) or isinstance(c, bool):
        return ""
    if (op is ast.Gt and c == 0) or (op is ast.GtE and c == 1) or (op is ast.NotEq and c == 0):
        return "first"
    return "bound"


def _flags(trace: Trace, events: list[EventRec]) -> tuple[tuple[int, str, int], ...]:
    """(branch key, condition text, line) of the conditions events ran under that do not change
    between iterations: settings (`if self.use_amp:`), one value for the whole run."""
    out = []
    for k in sorted({k for e in events for k, _, _ in e.path}):
        test = trace.branch_tests.get(k)
        if test is None or counter_like(*test):
            continue
        out.append((k, _flag_text(test[0]), getattr(test[0], "lineno", 0)))
    return tuple(out)


def _flag_text(test: ast.expr) -> str:
    """The value a condition tests, whichever way round (`not x`, `x is None` and `x` test one thing)."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        test = test.left
    return ast.unparse(test)


def _library_modules(trace: Trace) -> tuple[M.LibraryModule, ...]:
    """The model's LibraryModule records of the library models a run built (build.py)."""
    out, seen = [], set()
    for m in getattr(trace, "libraries", ()):
        lm = m.lib.model if m.lib is not None else None
        if lm is None or m.oid in seen:
            continue
        seen.add(m.oid)
        span = None
        if lm.source:
            path, line = lm.source
            span = M.Span(path, line, 0, line, 0)
        out.append(M.LibraryModule(m.path(), m.type_name(), lm.canonical, lm.how, span, lm.note))
    return tuple(out)


def _module_names(sf: SourceFile) -> frozenset[str]:
    """The names a file's imports bind (`F`, `torch`): a call on one is a function's, not a method's."""
    names = getattr(sf.tree, "_gradaudit_imported", None)
    if names is None:
        names = frozenset(
            (a.asname or a.name).partition(".")[0]
            for n in ast.walk(sf.tree)
            if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names
        )
        sf.tree._gradaudit_imported = names  # type: ignore[attr-defined]  # a cache on the tree
    return names


def _changed_name(stmt: ast.AST, modules: frozenset[str]) -> str | None:
    """The local name an in-place statement (or call) changes: `x += v`, `x = F.relu_(x)`, `x.add_(v)`."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else stmt
    if isinstance(call, ast.Call):
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in modules:
            return func.value.id if func.attr.endswith("_") else None
        if call.args and isinstance(call.args[0], ast.Name):
            return call.args[0].id
    return None


def _carried_in_and_out(s: SaveRec, site: Site) -> bool:
    """The save was of a tensor a loop iteration received from before it (`h` in `h = f(h)`, saved
    by `f`), and the change is after that loop, to the name the loop rebinds: after the loop the
    name holds the last iteration's new tensor (or, if none ran, the first one, which no iteration
    then saved), never a tensor an iteration received. The engine's loop, run twice and joined, has
    both in one value (a vocoder's `x = leaky_relu_(x); x = up(x)` per stage, then
    `leaky_relu_(x)` after the stages: no saved tensor changes)."""
    storage = s.storage
    for c in s.ctx:
        if c[0] != "loop" or getattr(storage, "oid", None) is None or storage.oid >= c[5]:
            continue
        loop = c[1]
        if site.mod is not c[3] or not site.node.lineno > (loop.end_lineno or loop.lineno):
            continue
        name = _changed_name(site.node, _module_names(site.mod))
        if name is not None and name in rebound(loop):
            return True
    return False


def _split_writes(builder: Builder, trace: Trace) -> list[tuple[M.Span, bool]]:
    """One per statement: certain when any run of it was."""
    out: dict = {}
    for site, certain in trace.split_writes:
        span = builder.span(site)
        out[span] = out.get(span, False) or certain
    return list(out.items())


def _handed(trace: Trace, limit: int = 50_000) -> set[Unit]:
    """The parameter leaves reachable from what calls the engine could not see were given: a module's
    parameters, what an object's attributes, a list, a dict or an optimizer holds, transitively."""
    out: set[Unit] = set()
    seen: set[int] = set()
    todo = [o for rec in trace.unseen for o in rec.objs]
    while todo and len(seen) < limit:
        o = todo.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, Unit):
            out.add(o)
        elif isinstance(o, ModuleObj):
            out.update(o.units())
            todo.extend(x for v in o.attrs.values() if isinstance(v, V) for x in v.objs)
        elif isinstance(o, (InstanceObj, SymObj)):
            todo.extend(x for v in o.attrs.values() if isinstance(v, V) for x in v.objs)
        elif isinstance(o, ListObj):
            for v in (o.content, *(o.elems or ())):
                if isinstance(v, V):
                    todo.extend(v.objs)
        elif isinstance(o, DictObj):
            for v in (*o.keys.values(), o.rest):
                if isinstance(v, V):
                    todo.extend(v.objs)
        elif isinstance(o, OptimObj):
            out.update(o.units())
        elif isinstance(o, PIter):
            out.update(o.units)
    return out

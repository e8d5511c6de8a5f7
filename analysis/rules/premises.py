"""Premises: the facts a finding rests on, and whether code the engine could not see undermines them.

One mechanism for every rule. A rule names the kinds of premise its findings rest on
(`Rule.premises`, or its family's default); `establish` works each one out from the finding (the
parameters it names, the optimizer and the `backward()` its locations point to) and from the model
(`ProgramModel.unseen`: the code the engine could not see that was handed parameters, modules or
optimizers). A premise that leans on such code does not hold as proven: a confirmed finding resting on
it becomes suspicious, and its message says what could not be seen.

The kinds:

- `writes`: every change to the parameters named is made by code the engine read (an update, a
  freeze or unfreeze, a `.data` assignment);
- `groups`: the param groups of the optimizer concerned are all known, and no code the engine could
  not read was handed that optimizer (it could add a group);
- `optimizer`: no code the engine could not read was handed the optimizer concerned (it could step,
  clear or extend it there);
- `clears`: nothing the engine could not read is handed those parameters or that optimizer inside
  the loop (it could clear or step them there);
- `path`: the cut a finding names is the only way from those parameters to the loss: every other
  flow of them was followed (a call the engine could not read that is given them is a flow of its
  own, `reached_weak`, so it never hides behind this one);
- `step`: where the `backward()` concerned runs (the script's run, or a function checked on unknown
  arguments): stated, it does not lean on unseen code;
- `graph`: the graph that `backward()` reaches was recorded from ops the engine read;
- `hazard`: what makes the operand of a numerical hazard reach the bad value, and that it flows
  into a loss given to `backward()`;
- `together`: the calls a finding pairs (a scaled backward and a plain step, a clear and a step)
  run in one pass for some setting: they ran under conditions on at most one setting between
  them. Under two different settings (`if self.use_amp:` here, `if self.deepspeed:` there) the
  engine has not shown that both can hold in one run: one may be set only when the other is not.

Besides (`complete`), a finding about what the whole run does or never does (the lifecycle and
backward rules, those resting on writes, groups, optimizer or clears, and GA409) rests on the
analysis having followed the whole run: when a budget cut it short, what was not followed may undo
the claim (unfreeze what it says is never unfrozen), so the finding is at most suspicious; and when
the cut fell on a call handed the very objects a premise is about, the engine knows it did not look
there, and the finding is not reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..model.findings import CONFIRMED, SUSPICIOUS, Finding, Premise
from ..model.model import Optimizer, Param, ProgramModel, Span, Step, Unseen
from ..source.prebuilt import replace
from .base import BACKWARD, GRAPH_BREAK, LIFECYCLE, NUMERICAL, Rule, RuleContext
from .common import describe

WRITES, GROUPS, OPTIMIZER, CLEARS, STEP, PATH, GRAPH, HAZARD, TOGETHER = (
    "writes",
    "groups",
    "optimizer",
    "clears",
    "step",
    "path",
    "graph",
    "hazard",
    "together",
)
# `complete`: the analysis followed the whole run (no budget cut it short). A claim about what the
# code does or never does elsewhere (unfreezes, clears, steps, builds a scaler) leans on all of it:
# the lifecycle and backward rules and any rule resting on writes, groups, optimizer or clears do
# (kinds_of). A cut on the loss's own graph (a `.detach()`, an in-place write to a saved tensor) or
# a numerical hazard is a fact of the ops before the backward: calls not followed there are flows
# of their own (`path`). Listed only when it does not hold.
COMPLETE = "complete"
KINDS = (WRITES, GROUPS, OPTIMIZER, CLEARS, STEP, PATH, GRAPH, HAZARD, TOGETHER, COMPLETE)

# what a rule's findings rest on when it names nothing itself
FAMILY_DEFAULTS: dict[str, tuple[str, ...]] = {
    GRAPH_BREAK: (STEP, PATH),
    LIFECYCLE: (STEP, OPTIMIZER, TOGETHER),
    BACKWARD: (STEP, GRAPH, TOGETHER),
    NUMERICAL: (HAZARD, TOGETHER),
}


class _Facts:
    """What a finding points to, resolved once: the parameters it names, its optimizers and steps."""

    def __init__(self, ctx: RuleContext, f: Finding):
        model = ctx.model
        index = _param_index(ctx)
        self.params: frozenset[Param] = frozenset(p for n in f.params for p in index.get(n, ()))
        spans = {f.span} | {r.span for r in f.related}
        self.optimizers: list[Optimizer] = [o for o in model.optimizers if o.span in spans]
        self.steps: list[Step] = [s for s in model.steps if s.span in spans]
        if not self.steps:
            # anchored at an event of a step's iteration (a step() or zero_grad() call)
            self.steps = [s for s in model.steps if any(e.span in spans for e in s.events)][:1]
        events = [e for e in model.events if e.span == f.span]
        self.loops: tuple[int, ...] = events[0].loops if events else (self.steps[0].loops if self.steps else ())
        if not self.optimizers:
            keys = {e.target_key for e in events} | {k for s in self.steps for k in s.stepped}
            self.optimizers = [o for o in model.optimizers if o.key in keys]


def _param_index(ctx: RuleContext) -> dict[str, set[Param]]:
    index: dict[str, set[Param]] | None = ctx.cache.get("premise_params")
    if index is not None:
        return index
    model = ctx.model
    out: dict[str, set[Param]] = {}
    pools: list[Iterable[Param]] = [model.manual, model.written]
    for s in model.steps:
        pools += [s.reached, s.reached_weak, s.trained, s.frozen, s.maybe_frozen, s.inputs]
        pools += [c.removed | c.removed_weak for c in s.cuts]
    pools += [o.params for o in model.optimizers]
    pools += [x.params for x in model.freezes] + [x.params for x in model.new_params]
    pools += [x.params for x in model.unregistered] + [x.params for x in model.leaf_updates]
    pools += [x.params for x in model.losses] + [x.params for x in model.accumulations]
    pools += [x.params for x in model.nonleaf] + [x.params for x in model.grad_reads]
    pools += [u.params for u in model.unseen]
    # the same leaves recur in every step's and event's sets: each is indexed once
    for p in set().union(*pools):
        out.setdefault(p.module if p.opaque else p.name, set()).add(p)
    ctx.cache["premise_params"] = out
    return out


def _unseen_text(u: Unseen) -> str:
    what = f"`{u.detail}`" if u.detail else "a call"
    if u.kind == "not-followed":
        return f"{what} (line {u.span.line}) was not followed"
    if u.kind == "budget":
        return f"{what} (line {u.span.line}) was not followed: the analysis's budget ran out before it"
    if u.kind == "dynamic":
        return f"{what} (line {u.span.line}) works on an attribute whose name is computed"
    if u.kind == "exec":
        return f"{what} (line {u.span.line}) runs code built from a string"
    return f"{what} (line {u.span.line}) is code the engine could not read"


def _failed(text: str, hits: tuple[Unseen, ...]) -> Premise:
    first = min(hits, key=lambda u: u.seq)
    return Premise(text, False, _unseen_text(first), first.span, cut=any(u.kind == "budget" for u in hits))


def _writes(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    if not facts.params:
        return []
    text = f"every change to {describe(facts.params)} is made in code the engine read"
    hits = ctx.model.unseen_reaching(params=facts.params)
    return [_failed(text, hits) if hits else Premise(text)]


def _groups(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    out = []
    for o in facts.optimizers:
        text = f"the param groups of `{o.name}` are all known"
        hits = ctx.model.unseen_reaching(optimizers=frozenset((o.key,)), after=o.seq)
        if hits:
            out.append(_failed(text, hits))
        elif not o.complete:
            out.append(
                Premise(text, False, f"a param group of `{o.name}` is built from values the engine could not resolve")
            )
        else:
            out.append(Premise(text))
    return out


def _optimizer(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    out = []
    for o in facts.optimizers:
        if o.duck:
            out.append(
                Premise(
                    f"`{o.name}` is an optimizer",
                    False,
                    f"`{o.name}` is a value the engine did not see made, taken for an optimizer because both its "
                    f"`zero_grad()` and `step()` are called",
                )
            )
        elif o.assumed:
            out.append(Premise(f"`{o.name}` is an optimizer like torch's", False, o.assumed))
        text = f"every use of `{o.name}` is in code the engine read"
        hits = ctx.model.unseen_reaching(optimizers=frozenset((o.key,)), after=o.seq)
        out.append(_failed(text, hits) if hits else Premise(text))
    return out


def _clears(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    keys = frozenset(o.key for o in facts.optimizers)
    params = facts.params | frozenset(p for o in facts.optimizers for p in o.params)
    if not params and not keys:
        return []
    loops = facts.loops
    text = "nothing in the loop that the engine could not read is given these parameters or their optimizer"
    hits = tuple(u for u in ctx.model.unseen_reaching(params=params, optimizers=keys) if u.loops[: len(loops)] == loops)
    out = [_failed(text, hits) if hits else Premise(text)]
    # its own step() is code the engine did not read: it may clear or keep the gradients
    out += [
        Premise(f"`{o.name}.step()` leaves the gradients in place, as torch's optimizers do", False, o.assumed)
        for o in facts.optimizers
        if o.assumed
    ]
    return out


def _step(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    out = []
    steps = facts.steps or [s for s in ctx.model.steps if s.reached & facts.params]
    if not steps:
        # no backward() in view: what the finding says of its parameters (a leaf updated by hand)
        return [
            Premise(f"`{p.name}` is a leaf made at line {span.line}")
            for span, p in sorted(
                ((p.span, p) for p in facts.params if p.span is not None and not p.opaque),
                # the finding's own leaf first: two leaves may share a name (`<tensor>`), and
                # set order must not choose between them
                key=lambda t: (t[0].line != f.span.line, t[1].name, t[0].line, t[0].col),
            )[:1]
        ]
    for s in steps[:1]:
        alternatives = _alternative_optimizers(ctx, s, facts.params)
        if alternatives is not None:
            out.append(alternatives)
        call = f"`{_short(s.loss) or 'the loss'}.backward()`" if s.kind == "backward" else "`torch.autograd.grad(...)`"
        for text in s.assumed:
            # an annotation is not checked when the code runs: a subclass, a wrapper or another
            # class may be given
            out.append(Premise(text, holds=False, unseen=f"{text}, and the code that gives it was not seen"))
        if s.entry == "script":
            out.append(Premise(f"{call} (line {s.span.line}) runs when the file runs"))
        else:
            out.append(
                Premise(
                    f"{call} (line {s.span.line}) is in `{s.function}`, checked on arguments nothing in the file gives"
                )
            )
    return out


def _alternative_optimizers(ctx: RuleContext, step: Step, params: frozenset[Param]) -> Premise | None:
    """The `step()` call that steps the optimizer holding the finding's parameters steps others
    too, which do not hold them: one receiver that may be either (`pretrain_opt = gnn_opt`, then
    `lm_opt` under a phase; the engine joined them) or a loop over optimizers. Which of them runs
    with this backward() is not shown, so neither is that these parameters are stepped."""
    if not params:
        return None
    holds = {o.key: bool(o.params & params) for o in step.optimizers}
    by_call: dict[Span, set[int]] = {}
    for e in step.events:
        if e.kind == "step" and e.target_key in step.stepped:
            by_call.setdefault(e.span, set()).add(e.target_key)
    for span, keys in by_call.items():
        if len(keys) < 2 or not any(holds.get(k) for k in keys) or all(holds.get(k) for k in keys):
            continue
        names = sorted(o.name for o in step.optimizers if o.key in keys)
        return Premise(
            "the optimizer stepped with this backward() is the one holding these parameters",
            False,
            f"the `step()` at line {span.line} steps one of several optimizers ({', '.join(f'`{n}`' for n in names)}), "
            f"and which one runs with this backward() is not shown",
        )
    return None


def _path(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    for s in facts.steps[:1]:
        for c in s.cuts:
            if c.span == f.span:
                what = describe(facts.params) if facts.params else "the parameters behind it"
                return [
                    Premise(
                        f"`{_short(s.loss) or 'the loss'}` reaches {what} only through `{c.detail}` (line "
                        f"{c.span.line}): every other flow of them was followed"
                    )
                ]
    return []


def _graph(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    out = []
    for s in facts.steps[:1]:
        text = f"the graph `{_short(s.loss) or 'the loss'}` reaches was recorded from ops the engine read"
        if s.unseen:
            text += f" (besides `{s.unseen}`, whose own graph is not relied on)"
        out.append(Premise(text))
    for a in ctx.model.accumulations:
        if a.span == f.span:
            what = describe(a.params) if a.params else "parameters"
            out.append(Premise(f"the value accumulated carries the graph of {what}, built in the loop"))
            out.append(Premise("what it is accumulated into was made before the loop and outlives each iteration"))
    for g in ctx.model.grad_reads:
        if g.span == f.span:
            out.append(Premise("the tensor whose `.grad` is read is computed in code the engine read, not a leaf"))
            out.append(Premise("no retain_grad() is called on it"))
    return out


def _hazard(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    for r in ctx.model.risks:
        if r.code == f.code and r.span == f.span:
            return [
                Premise(f"the operand is {r.detail}" if r.detail else "the operand can reach the bad value"),
                Premise("the result flows into a loss given to backward()"),
            ]
    for e in ctx.model.events:
        if e.span == f.span and e.kind == "autocast":
            return [Premise(f"the region autocasts to {e.detail.rsplit(' ', 1)[-1]} and a backward() runs from it")]
    return _step(ctx, f, facts)


def _together(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    spans = {f.span} | {r.span for r in f.related}
    events = [e for e in ctx.model.events if e.span in spans and e.conds]
    if len({e.span for e in events}) < 2:
        return []  # one call: whatever it runs under, the finding holds whenever it runs
    flags = {k: (text, line) for k, text, line in ctx.model.flags}
    shared = set.intersection(*({(k, a) for k, a, _ in e.conds} for e in events))
    needed: dict[str, int] = {}
    for e in events:
        for k, a, _ in e.conds:
            if (k, a) not in shared and k in flags:
                text, line = flags[k]
                needed.setdefault(text, line)
    if len(needed) < 2:
        return []
    shown = sorted(needed.items(), key=lambda t: t[1])[:2]
    text = "the settings these calls run under can hold in one run"
    why = " and ".join(f"`{t}` (line {line})" for t, line in shown)
    return [Premise(text, False, f"they run under {why}, and nothing shows one run sets both")]


def _complete(ctx: RuleContext, f: Finding, facts: _Facts) -> list[Premise]:
    if not ctx.model.incomplete:
        return []
    why = ctx.model.incomplete_reason or "a budget ran out"
    return [
        Premise(
            "the analysis followed the whole run (no budget cut it short)", False, f"the analysis stopped early ({why})"
        )
    ]


_DERIVE: dict[str, Callable[[RuleContext, Finding, _Facts], list[Premise]]] = {
    WRITES: _writes,
    GROUPS: _groups,
    OPTIMIZER: _optimizer,
    CLEARS: _clears,
    STEP: _step,
    PATH: _path,
    GRAPH: _graph,
    HAZARD: _hazard,
    TOGETHER: _together,
    COMPLETE: _complete,
}


# claims about what the whole run does or never does: what a budget cut off may undo them
_WHOLE_RUN = (WRITES, GROUPS, OPTIMIZER, CLEARS)


def kinds_of(rule: Rule) -> tuple[str, ...]:
    kinds = rule.premises or FAMILY_DEFAULTS.get(rule.family, (STEP,))
    whole_run = rule.family in (LIFECYCLE, BACKWARD) or any(k in _WHOLE_RUN for k in kinds)
    if whole_run and COMPLETE not in kinds:
        kinds = (*kinds, COMPLETE)
    return kinds


# what unseen code given the objects of a failed premise may do, as the message says it
_MAY = {
    WRITES: "it is given them and may change them",
    GROUPS: "it is given the optimizer and may add a param group",
    OPTIMIZER: "it is given the optimizer and may step, clear or extend it",
    CLEARS: "it is given them inside the loop and may clear or step them there",
}


def establish(ctx: RuleContext, rule: Rule, f: Finding) -> Finding | None:
    """The finding with its premises; confirmed only when none leans on code the engine could not see,
    and None when one leans on a call the engine did not follow because a budget ran out."""
    facts = _Facts(ctx, f)
    premises: list[Premise] = []
    failed: list[tuple[str, Premise]] = []
    for kind in kinds_of(rule):
        for p in _DERIVE[kind](ctx, f, facts):
            if p in premises:
                continue
            premises.append(p)
            if not p.holds:
                failed.append((kind, p))
    if any(p.cut for _, p in failed):
        return None
    if failed and f.confidence == CONFIRMED:
        kind, p = failed[0]
        why = f"; not proven: {p.unseen}"
        if p.span is not None:  # code the engine could not see, called there
            why += f", and {_MAY.get(kind, 'it may change what this rests on')}"
        return replace(f, confidence=SUSPICIOUS, message=f.message + why, premises=tuple(premises))
    return replace(f, premises=tuple(premises))


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def spans_of(premises: Iterable[Premise]) -> list[Span]:
    return [p.span for p in premises if p.span is not None]


__all__ = ["KINDS", "ProgramModel", "establish", "kinds_of"]

"""Helpers shared by rules: phrasing parameter sets, and the cut analysis behind GA101-GA105."""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterable
from typing import Any

from ..model.findings import CONFIRMED, SUSPICIOUS, Finding, Fix, Related
from ..model.model import Cut, EventKind, Optimizer, Param, ProgramModel, Risk, Span, Step
from .base import Rule, RuleContext

# a cut that breaks a step: (cut, step, parameters lost, of them certainly, confidence, backward() raises)
CutCandidate = tuple[Cut, Step, set[Param], set[Param], str, bool]


def segment(text: str, node: ast.AST) -> str:
    """The source of a node parsed from `text` (ast types it optional; such a node has its positions)."""
    return ast.get_source_segment(text, node) or ""


def module_of(params: Iterable[Param]) -> str:
    """The innermost module path that holds all of `params` ('' when they share none)."""
    paths = [p.module.split(".") for p in params]
    if not paths:
        return ""
    prefix = paths[0]
    for parts in paths[1:]:
        n = 0
        while n < len(prefix) and n < len(parts) and prefix[n] == parts[n]:
            n += 1
        prefix = prefix[:n]
    return ".".join(prefix)


ADAPTERS = ".<adapters>"  # library_adapters.ADAPTERS_KEY under its model


def plural(params: Collection[Param]) -> bool:
    """Whether `describe(params)` names several things (the adapters of a model are many)."""
    return len(params) != 1 or any(p.name.endswith(ADAPTERS) for p in params)


def describe(params: Iterable[Param]) -> str:
    """'4 parameters of `model.encoder`', '`w1`', 'the parameters of `model`' ..."""
    ordered = sorted(params, key=lambda p: p.name)
    if len(ordered) == 1 and ordered[0].name.endswith(ADAPTERS):
        return f"the adapters PEFT adds to `{ordered[0].name[: -len(ADAPTERS)]}`"
    named = [p for p in ordered if not p.opaque]
    opaque = [p for p in ordered if p.opaque]
    if not named and opaque:
        mods = sorted({p.module for p in opaque})
        return "the parameters of " + _list(f"`{m}`" for m in mods)
    if len(named) == 1 and not opaque:
        p = named[0]
        return f"`{p.name}`"
    if not opaque and all(p.module == p.name for p in named):
        # free-standing leaves (w1, b1 ...): name them, once each (a leaf made afresh at each
        # iteration the engine ran is several leaves of one name)
        distinct = list(dict.fromkeys(p.name for p in named))
        shown = [f"`{n}`" for n in distinct[:4]]
        return _list(shown) + (f" and {len(distinct) - 4} more" if len(distinct) > 4 else "")
    owner = module_of(named + opaque)
    n = len(named)
    if any(p.repeated for p in named):
        # built in a loop the engine followed once: the real count is a multiple of what it saw
        return f"the parameters of `{owner}`" if owner else "parameters built in a loop"
    count = f"{n} parameter{'s' if n != 1 else ''}" + (" and more" if opaque else "")
    if owner:
        return f"{count} of `{owner}`"
    mods = sorted({p.module for p in named})
    if len(mods) <= 3:
        return f"{count} ({_list(f'`{m}`' for m in mods)})"
    return f"{count} in {len(mods)} modules"


def _list(items: Iterable[str]) -> str:
    shown = list(items)
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def names(params: Iterable[Param]) -> tuple[str, ...]:
    return tuple(sorted(p.name if not p.opaque else p.module for p in params))


def optimizer_of(step: Step) -> Optimizer | None:
    for o in step.optimizers:
        if o.key in step.stepped:
            return o
    return None


def step_related(step: Step, ctx: RuleContext) -> tuple[Related, ...]:
    out = []
    if step.loss_span is not None and step.loss_span != step.span:
        out.append(Related(step.loss_span, f"the loss `{_short(step.loss)}` is computed here"))
    out.append(
        Related(
            step.span,
            f"`{_short(step.loss)}.backward()`" if step.kind == EventKind.BACKWARD else "`torch.autograd.grad(...)`",
        )
    )
    o = optimizer_of(step)
    if o is not None:
        out.append(Related(o.span, f"optimizer `{o.name}` ({o.type}) is built here"))
    return tuple(out)


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def loss_name(step: Step) -> str:
    return _short(step.loss) or "the loss"


def cut_findings(
    ctx: RuleContext,
    kinds: Collection[str],
    rule: Rule,
    phrase: Callable[[Cut, str, Step], str],
    fix_for: Callable[[RuleContext, Cut, Step], Fix | None] | None = None,
) -> list[Finding]:
    """Findings for cuts of `kinds`: a cut that removes trained parameters from every path to a loss.

    Confirmed when parameters the cut certainly removed are ones an optimizer (or a manual update)
    changes for that loss and the loss reaches them by no other path, or when the loss then
    certainly requires no grad (torch raises at backward()). Parameters the value only may have
    carried (through calls the engine did not follow) make the finding suspicious: absence of
    evidence is not proof.
    """
    found: dict[Span, dict[str, Any]] = {}  # cut -> {cut, lost, steps, raises, level}
    for cut, step, lost, certain, level, raises in _cut_candidates(ctx):
        if cut.kind not in kinds:
            continue
        if cut.kind == "sample" and cut.note == "action":
            # made a Python number or an array (`env.step(action.item())`): an action whose returns
            # reach the loss by design (REINFORCE weighs `log_prob` by them), not a value to train through
            continue
        key = cut.span
        entry = found.get(key)
        if entry is None:
            found[key] = entry = {"cut": cut, "lost": set(), "steps": [], "raises": False, "level": level}
        elif level == CONFIRMED:
            entry["level"] = CONFIRMED
        entry["lost"] |= certain or lost
        entry["steps"].append(step)
        entry["raises"] |= raises
    out = []
    for span, e in found.items():
        cut, lost, step = e["cut"], e["lost"], e["steps"][0]
        shown = lost or (cut.removed | cut.removed_weak)
        what = describe(shown) if shown else "the model's parameters"
        msg = phrase(cut, what, step)
        if cut.role == "dead" and (lost & (step.reached | step.reached_weak | step.co_reached)):
            msg = (
                f"`{cut.detail}` makes this term of `{loss_name(step)}` a constant: it only shifts the loss's "
                f"value and sends no gradient to {what}, which get gradient from the rest of the loss only"
            )
        elif e["raises"]:
            msg += f"; `{loss_name(step)}` then reaches no trainable parameter and backward() raises"
        else:
            o = optimizer_of(step)
            msg += (
                f", so {'`' + o.name + '`' if o else 'the update'} never changes them"
                if step.kind != EventKind.GRAD
                else ", so torch.autograd.grad cannot reach them"
            )
            if e["level"] != CONFIRMED:
                msg += (
                    " on the runs that leave them trainable (the program freezes them under a condition)"
                    if lost & cut.removed & step.maybe_frozen
                    else " (if the calls the engine could not follow carried their gradient this far)"
                )
        fix = fix_for(ctx, cut, step) if fix_for is not None else None
        related = step_related(step, ctx)
        if e["level"] != CONFIRMED and lost & cut.removed & step.maybe_frozen:
            related += tuple(
                Related(f.span, "frozen here on some runs")
                for f in ctx.model.freezes
                if not f.value and f.params & lost
            )[:1]
        out.append(
            rule.finding(
                span,
                msg,
                confidence=e["level"],
                params=names(shown),
                related=related,
                fix=fix,
                data={"cut": cut.kind},
            )
        )
    for cut, unit in ctx.model.unit_cuts:
        if cut.kind not in kinds or cut.span in found:
            continue
        # no step reached the unit: its own result shows a term made a constant, whatever the caller
        # gives (a training step that uses the result decides: suspicious)
        found[cut.span] = {}
        shown = cut.removed | cut.removed_weak
        what = describe(shown) if shown else "what it was computed from"
        claim = (
            f"`{cut.detail}` makes a new leaf of a value computed from {what}, which `{unit}`'s result reaches "
            "by no other path: no gradient goes back to them"
            if cut.detail == "nn.Parameter()"
            else f"`{cut.detail}` makes this term of `{unit}`'s result a constant: it only shifts the value and "
            f"sends no gradient back to {what}"
        )
        out.append(
            rule.finding(
                cut.span,
                f"{claim} (seen running `{unit}` on its own with inputs that require grad: no training step in the "
                "checked code reaches it)",
                confidence=SUSPICIOUS,
                params=names(shown),
                data={"cut": cut.kind},
            )
        )
    return out


def _cut_candidates(ctx: RuleContext) -> list[CutCandidate]:
    """(cut, step, lost, certain, level, raises) for every cut of every kind that breaks a step,
    computed once per analysis: which cut is the break among several depends on all of them."""
    cached: list[CutCandidate] | None = ctx.cache.get("cut_candidates")
    if cached is not None:
        return cached
    out: list[CutCandidate] = []
    dropped = dropped_loss_params(ctx.model)
    for step in ctx.model.steps:
        own = step.reached | step.reached_weak
        reach = own | step.co_reached  # gradients of losses stepped together add up
        # `top` means the loss may also carry gradient from parameters the engine cannot name; known
        # parameters only travel along tracked flows, so a cut of known ones is still decided, but
        # "the loss reaches nothing" is not; nor is it when part of the loss was never seen.
        empty = not (own - step.frozen) and not step.top
        # through round/floor/sign the graph goes on: backward() runs, with zero gradients
        zero_path = any(c.kind == "zerograd" and c.removed - step.frozen for c in step.cuts)
        raises = step.requires_no_grad or (empty and not step.unseen and not zero_path)
        candidates = []
        # a cut behind a fresh leaf standing in for the loss is reported once, as that leaf (GA106)
        behind = {c.span for _, cuts, _ in stand_in_leaves(ctx, step) for c in cuts}
        for cut in step.cuts:
            if cut.span in behind:
                continue
            # parameters with a loss term of their own that is computed and dropped: that term is the
            # defect (GA209), and this cut the stop-gradient it looks like
            # parameters given a gradient by hand elsewhere (`p.grad.add_(hypergradient)`) change
            # whatever this loss reaches
            # a dead term (`l1 + w * perceptual.detach().item()`) trains nothing even where its
            # parameters reach the loss through another term: the term itself is the defect
            removed = (cut.removed | cut.removed_weak) - reach - dropped - ctx.model.grad_fed
            # a module given its weights by another one (`old_fc.load_state_dict(col.fc.state_dict())`,
            # a target network synced from the online one): cutting it off is how it is kept fixed
            removed = frozenset(p for p in removed if p.origin != "loaded")
            if cut.role == "dead" and not (removed & step.trained):
                # every parameter behind it reaches the loss another way: the term is dead all the same
                removed = (cut.removed | cut.removed_weak) - dropped - ctx.model.grad_fed
            if step.kind == EventKind.GRAD:
                lost = {p for p in removed if p in step.inputs}
            else:
                lost = {p for p in removed if p in step.trained}
            # a parameter frozen on some paths (`if args.freeze: p.requires_grad = False`) is cut
            # harmlessly on those: the finding holds on the others only
            certain = {p for p in lost if p in cut.removed and p not in step.maybe_frozen}
            if lost:
                level = CONFIRMED if certain else SUSPICIOUS
            elif raises and not (cut.removed & dropped) and (cut.removed - step.frozen or cut.removed_weak or cut.top):
                level = CONFIRMED
            else:
                continue
            candidates.append((cut, lost, certain, level))
        # several cuts sever the same parameters: the one in the loss's own path is the break; a
        # stop-gradient on a loss function's target or on a weighting factor is the idiom beside it
        plain = set()
        for cut, lost, _, _ in candidates:
            if not cut.role or cut.role == "dead":  # a term made a constant is a break of its own
                plain |= lost
        for cut, lost, certain, level in candidates:
            if cut.role and cut.role != "dead" and lost and lost <= plain:
                continue
            out.append((cut, step, lost, certain, level, raises))
    ctx.cache["cut_candidates"] = out
    return out


def stand_in_leaves(ctx: RuleContext, step: Step) -> list[tuple[Param, tuple[Cut, ...], set[Param]]]:
    """(leaf, cuts, parameters lost) for each fresh leaf that stands in for the loss or a loss term:
    requires_grad set on a value cut from trained parameters so that backward() runs (GA106).
    Hand-made weights an optimizer trains, inputs whose gradient is asked for and
    `torch.tensor(x, requires_grad=True)` (GA104's) are not stand-ins."""
    if step.kind != EventKind.BACKWARD or not step.fresh:
        return []
    optimized = ctx.cache.get("optimized")
    if optimized is None:
        optimized = ctx.cache["optimized"] = frozenset(p for o in ctx.model.optimizers for p in o.params)
    reach = (step.reached | step.reached_weak) - step.frozen
    others = {p for p, _ in step.fresh}
    out = []
    for leaf, cuts in step.fresh:
        if leaf in optimized or leaf in step.inputs or leaf.span is None:
            continue
        if any(c.kind == "rewrap" and (leaf.span.contains(c.span) or c.span.contains(leaf.span)) for c in cuts):
            continue
        removed: set[Param] = set()
        for c in cuts:
            removed |= c.removed | c.removed_weak
        lost = {p for p in removed - reach if p in step.trained}
        only_fresh = not (reach - {leaf} - others) and not step.top and not step.unseen
        # what the cut took away must be something that trains: a module's parameter or a leaf an
        # optimizer holds; a copy of a plain input made a leaf of its own (a gradient check comparing
        # two implementations, `x.clone().detach().requires_grad_()`) is differentiated on purpose
        removed = {p for p in removed if p.kind == "param" or p in optimized or p in step.trained}
        if lost or (only_fresh and removed):
            out.append((leaf, cuts, lost or removed))
    return out


def dropped_loss_params(model: ProgramModel) -> frozenset[Param]:
    """Parameters that a computed loss term carries gradient from while it reaches no backward(),
    and that no backpropagated loss reaches: what GA209 reports."""
    reached: set[Param] = set()
    for s in model.steps:
        reached |= s.reached | s.reached_weak | s.co_reached
    out: set[Param] = set()
    for term in model.losses:
        if not term.backpropagated:
            out |= term.params - reached
    return frozenset(out)


def risk_findings(
    ctx: RuleContext,
    rule: Rule,
    phrase: Callable[[Risk], str],
    fix_for: Callable[[RuleContext, Risk], Fix | None] | None = None,
) -> list[Finding]:
    """Findings for the numerical hazards of `code` that flow into a loss given to backward()."""
    out = []
    for r in ctx.model.risks:
        if r.code != rule.code or not r.reached:
            continue
        fix = fix_for(ctx, r) if fix_for is not None else None
        msg = phrase(r)
        if r.unit:
            msg += (
                f" (seen running `{r.unit}` on its own with inputs that require grad: no training step in the "
                f"checked code reaches it)"
            )
        # `unit`: seen only in a forward run alone; the same hazard reached by a training step wins
        data = {"unit": r.unit, "within": r.within or r.unit} if r.unit else None
        out.append(rule.finding(r.span, msg, confidence=r.confidence, fix=fix, data=data))
    return out

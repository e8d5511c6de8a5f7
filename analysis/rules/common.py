"""Helpers shared by rules: phrasing parameter sets, and the cut analysis behind GA101-GA105."""
from __future__ import annotations

from ..findings import CONFIRMED, Finding, Related
from ..model import Step
from .base import RuleContext


def module_of(params) -> str:
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


def describe(params) -> str:
    """'4 parameters of `model.encoder`', '`w1`', 'the parameters of `model`' ..."""
    params = sorted(params, key=lambda p: p.name)
    named = [p for p in params if not p.opaque]
    opaque = [p for p in params if p.opaque]
    if not named and opaque:
        mods = sorted({p.module for p in opaque})
        return "the parameters of " + _list(f"`{m}`" for m in mods)
    if len(named) == 1 and not opaque:
        p = named[0]
        return f"`{p.name}`"
    if not opaque and all(p.module == p.name for p in named):
        # free-standing leaves (w1, b1 ...): name them
        shown = [f"`{p.name}`" for p in named[:4]]
        return _list(shown) + (f" and {len(named) - 4} more" if len(named) > 4 else "")
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


def _list(items) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def names(params) -> tuple:
    return tuple(sorted(p.name if not p.opaque else p.module for p in params))


def optimizer_of(step: Step):
    for o in step.optimizers:
        if o.key in step.stepped:
            return o
    return None


def step_related(step: Step, ctx: RuleContext) -> tuple:
    out = []
    if step.loss_span is not None and step.loss_span != step.span:
        out.append(Related(step.loss_span, f"the loss `{_short(step.loss)}` is computed here"))
    out.append(Related(step.span, f"`{_short(step.loss)}.backward()`" if step.kind == "backward"
                       else "`torch.autograd.grad(...)`"))
    o = optimizer_of(step)
    if o is not None:
        out.append(Related(o.span, f"optimizer `{o.name}` ({o.type}) is built here"))
    return tuple(out)


def _short(text: str, limit=40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def loss_name(step: Step) -> str:
    return _short(step.loss) or "the loss"


def cut_findings(ctx: RuleContext, kinds, code, name, family, phrase, fix_for=None):
    """Findings for cuts of `kinds`: a cut that removes trained parameters from every path to a loss.

    Confirmed when the removed parameters are ones an optimizer (or a manual update) changes for
    that loss and the loss reaches them by no other path, or when the loss then reaches nothing
    at all (torch raises at backward()).
    """
    found: dict = {}
    for step in ctx.model.steps:
        own = step.reached | step.reached_weak
        reach = own | step.co_reached   # gradients of losses stepped together add up
        # `top` means the loss may also carry gradient from parameters the engine cannot name; known
        # parameters only travel along tracked flows, so a cut of known ones is still decided, but
        # "the loss reaches nothing" is not.
        raises = not (own - step.frozen) and not step.top
        for cut in step.cuts:
            if cut.kind not in kinds:
                continue
            removed = (cut.removed | cut.removed_weak) - reach
            if step.kind == "grad":
                lost = {p for p in removed if p in step.inputs}
            else:
                lost = {p for p in removed if p in step.trained}
            if not lost:
                if not (raises and (cut.removed - step.frozen or cut.removed_weak or cut.top)):
                    continue
            key = cut.span
            entry = found.get(key)
            if entry is None:
                found[key] = entry = {"cut": cut, "lost": set(), "steps": [], "raises": False}
            entry["lost"] |= lost
            entry["steps"].append(step)
            entry["raises"] |= raises
    out = []
    for span, e in found.items():
        cut, lost, step = e["cut"], e["lost"], e["steps"][0]
        shown = lost or (cut.removed | cut.removed_weak)
        what = describe(shown) if shown else "the model's parameters"
        msg = phrase(cut, what, step)
        if e["raises"]:
            msg += f"; `{loss_name(step)}` then reaches no trainable parameter and backward() raises"
        else:
            o = optimizer_of(step)
            msg += f", so {'`' + o.name + '`' if o else 'the update'} never changes them" if step.kind != "grad" \
                else ", so torch.autograd.grad cannot reach them"
        fix = fix_for(ctx, cut, step) if fix_for is not None else None
        out.append(Finding(code, name, family, CONFIRMED, span, msg, names(shown),
                           step_related(step, ctx), fix, data={"cut": cut.kind}))
    return out

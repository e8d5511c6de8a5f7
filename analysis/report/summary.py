"""Plain-language views of the training-step model: a code lens title and a hover (the graph is
in graph.py).

The language server shows these; they live in the engine so that any client (the CLI, the
audit report, tests) gets the same words from the same model.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model.findings import Finding
from ..model.model import EventKind, ProgramModel, Span, Step
from ..rules.common import describe

_ORDER_KINDS = ("zero_grad", "backward", "grad", "step", "sched_step", "clip", "unscale", "scaler_update")
_SHORT = {
    "zero_grad": "zero_grad",
    "backward": "backward",
    "grad": "autograd.grad",
    "step": "step",
    "sched_step": "scheduler.step",
    "clip": "clip",
    "unscale": "unscale_",
    "scaler_update": "scaler.update",
}


def unique_steps(model: ProgramModel) -> list[Step]:
    """One step per backward() call site (loops are replayed twice; helpers may run twice)."""
    seen, out = set(), []
    for s in model.steps:
        key = (s.span.path, s.span.line, s.span.col)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _one_line(text: str, limit=48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def param_summary(params) -> str:
    named = [p for p in params if not p.opaque]
    if not named:
        return "parameters the engine cannot see" if params else "no parameters"
    modules = {p.module for p in named}
    more = "+" if any(p.repeated or p.opaque for p in params) else ""
    return (
        f"{len(named)}{more} param{'s' if len(named) != 1 else ''} in {len(modules)} "
        f"module{'s' if len(modules) != 1 else ''}"
    )


def order_of(step: Step) -> str:
    """The lifecycle calls of one iteration around this backward, in order."""
    kinds = [e.kind for e in step.events if e.kind in _ORDER_KINDS]
    collapsed: list[str] = []
    for k in kinds:
        if not collapsed or collapsed[-1] != k:
            collapsed.append(k)
    return " -> ".join(_SHORT[k] for k in collapsed)


def stepped_optimizers(step: Step):
    return [o for o in step.optimizers if o.key in step.stepped]


def lens_title(step: Step, loss_text: str = "") -> str:
    """`loss <- criterion(model(x), y) · 14 params in 2 modules · AdamW (2 groups) · zero_grad -> backward -> step`"""
    parts = []
    head = step.loss or "loss"
    parts.append(
        f"{_one_line(head, 24)} <- {_one_line(loss_text)}" if loss_text and loss_text != head else _one_line(head)
    )
    parts.append(param_summary(step.reached | step.reached_weak) + (" (and unknown)" if step.top else ""))
    opts = stepped_optimizers(step)
    if opts:
        parts.append(", ".join(f"{o.type} ({len(o.groups)} group{'s' if len(o.groups) != 1 else ''})" for o in opts))
    else:
        parts.append("no optimizer step found")
    order = order_of(step)
    if order:
        parts.append(order)
    return " · ".join(parts)


def _names(params, limit=8) -> str:
    names = sorted(p.name if not p.opaque else f"{p.module} (unseen)" for p in params)
    if len(names) > limit:
        return ", ".join(f"`{n}`" for n in names[:limit]) + f", … ({len(names) - limit} more)"
    return ", ".join(f"`{n}`" for n in names) or "none"


def hover_markdown(model: ProgramModel, path: str, line: int, col: int, findings: Iterable[Finding] = ()) -> str | None:
    """Markdown for a hover on a finding's anchor (what it rests on), a `backward()`, a `step()` or an
    optimizer's construction."""
    here = [f for f in findings if _within(f.span, path, line, col)]
    rest = _model_hover(model, path, line, col)
    if not here:
        return rest
    parts = [premises_markdown(f, path) for f in sorted(here, key=lambda f: f.code)]
    return "\n\n".join(parts + ([rest] if rest else []))


def premises_markdown(f: Finding, here: str) -> str:
    """What a finding rests on: each premise, held (established from code read) or not proven (it leans
    on code the engine could not see, named with where it is called)."""
    lines = [f"**{f.code} {f.name}** ({f.confidence}) rests on:", ""]
    for p in f.premises:
        if p.holds:
            lines.append(f"- ✓ {p.text}")
        else:
            # the unseen code is named with its line; in another file, with its file
            where = f" ({p.span.path})" if p.span is not None and p.span.path != here else ""
            lines.append(f"- ✗ {p.text}: not proven, {p.unseen}{where}")
    if len(lines) == 2:
        lines.append("- (no premise recorded)")
    return "\n".join(lines)


def _model_hover(model: ProgramModel, path: str, line: int, col: int) -> str | None:
    for step in unique_steps(model):
        if _within(step.span, path, line, col):
            return _step_hover(step)
    for step in unique_steps(model):
        for e in step.events:
            if e.kind in (EventKind.STEP, EventKind.ZERO_GRAD, EventKind.ADD_PARAM_GROUP) and _within(
                e.span, path, line, col
            ):
                opt = next((o for o in step.optimizers if o.key == e.target_key), None)
                if opt is not None:
                    return _optimizer_hover(opt, step, path)
    for opt in model.optimizers:
        if _within(opt.span, path, line, col):
            stepped = next((s for s in unique_steps(model) if opt.key in s.stepped), None)
            return _optimizer_hover(opt, stepped, path)
    return None


def _within(span: Span | None, path: str, line: int, col: int) -> bool:
    if span is None or span.path != path:
        return False
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


def _step_hover(step: Step) -> str:
    reached = step.reached | step.reached_weak
    held = set()
    for o in stepped_optimizers(step):
        held |= o.params
    lines = [f"**`{step.loss}.backward()`** in `{step.function}`", ""]
    lines.append(
        f"- reaches {describe(reached) if reached else 'no parameter'}"
        + (" (and parameters the engine cannot see)" if step.top else "")
    )
    opts = stepped_optimizers(step)
    if opts:
        for o in opts:
            lines.append(
                f"- `{o.name}` ({o.type}, {len(o.groups)} group{'s' if len(o.groups) != 1 else ''}) "
                f"holds {describe(o.params) if o.params else 'no known parameter'}"
            )
    else:
        lines.append("- no optimizer is stepped for this loss")
    missing = {p for p in reached - held if not p.opaque} - step.frozen
    idle = {p for p in held - reached if not p.opaque} - step.frozen
    if opts:
        lines.append(f"- reached but not optimized: {_names(missing)}")
        lines.append(f"- optimized but not reached: {_names(idle)}")
    if step.frozen:
        lines.append(f"- frozen: {describe(step.frozen)}")
    for c in step.cuts:
        if c.removed:
            lines.append(f"- cut at {c.span.at(step.span.path)} by `{c.detail}`: {describe(c.removed)}")
    order = order_of(step)
    if order:
        lines.append(f"- one iteration: {order}")
    return "\n".join(lines)


def _optimizer_hover(opt, step: Step | None, here: str) -> str:
    """`here`: the hovered document, where a location in another file is named with its file."""
    lines = [f"**`{opt.name}`** ({opt.type}), built at {opt.span.at(here)}", ""]
    for i, g in enumerate(opt.groups):
        opts = f" ({', '.join(g.options)})" if g.options else ""
        exact = "" if g.exact else " (not known exactly)"
        lines.append(f"- group {i}{opts}: {describe(g.params) if g.params else 'no known parameter'}{exact}")
    if step is not None:
        reached = step.reached | step.reached_weak
        lines.append(f"- `{step.loss}` reaches {describe(reached) if reached else 'no parameter'}")
        lines.append(f"- held but not reached: {_names({p for p in opt.params - reached if not p.opaque})}")
        lines.append(
            f"- reached but not held: {_names({p for p in reached - opt.params if not p.opaque} - step.frozen)}"
        )
    return "\n".join(lines)

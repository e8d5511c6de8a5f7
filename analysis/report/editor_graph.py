"""The training-step graph as JSON-ready data, for the editor's diagram: one path, from the
training-step model and the findings of the same analysis to the picture.

For each `backward()`: the modules whose parameters take part (reaching the loss, cut off from
it by a defect, behind a valid stop-gradient, frozen, or only held by an optimizer), which
optimizer holds which of them (by parameter, so a head replaced after the optimizer was built is
not drawn as held by it), the findings on the modules or optimizers they concern, and the calls
of one iteration in the user's own words (`scheduler.step()`, `clip_grad_norm_()`).
"""

from __future__ import annotations

import ast

from ..model.model import EventKind, ProgramModel, Span, Step
from ..rules.common import module_of
from .summary import unique_steps

# what an event is called when its source text is not at hand
_FALLBACK = {
    "zero_grad": "zero_grad",
    "backward": "backward",
    "grad": "torch.autograd.grad",
    "step": "step",
    "sched_step": "step",
    "clip": "clip_grad_norm_",
    "unscale": "unscale_",
    "scaler_update": "update",
    "scaler_scale": "scale",
    "scaler_step": "step",
    "add_param_group": "add_param_group",
}
_MODULE_ROOTS = ("torch", "nn", "F", "optim", "utils")


def _span_text(source, span: Span | None) -> str:
    if span is None or source is None:
        return ""
    text = source(span.path)
    if not text:
        return ""
    lines = text.splitlines()
    if not 0 < span.line <= len(lines) or not 0 < span.end_line <= len(lines):
        return ""
    if span.line == span.end_line:
        return lines[span.line - 1][span.col : span.end_col]
    return "\n".join(
        [
            lines[span.line - 1][span.col :],
            *lines[span.line : span.end_line - 1],
            lines[span.end_line - 1][: span.end_col],
        ]
    )


def call_label(text: str) -> str:
    """`scheduler.step()` for `scheduler.step()`, `clip_grad_norm_()` for
    `torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)`: the callee as the user wrote it,
    without a library's module path."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return ""
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name) and func.id in _MODULE_ROOTS:
        return f"{parts[0]}()" if parts else f"{func.id}()"
    name = ast.unparse(node.func)
    if len(name) > 40 and parts:
        name = f"….{parts[0]}"
    return f"{name}()"


def _event_label(e, source) -> str:
    label = call_label(_span_text(source, e.span))
    if label:
        return label
    name = _FALLBACK.get(e.kind, e.kind)
    return f"{e.target}.{name}()" if e.target and e.kind != EventKind.CLIP else f"{name}()"


def _events(step: Step, source) -> list:
    out, last = [], None
    for e in step.events:
        label = _event_label(e, source)
        key = (e.span.path, e.span.line, e.span.col, label)
        if key == last:  # `scaler.step(optimizer)` is both the scaler's and the optimizer's step
            continue
        last = key
        out.append(
            {
                "kind": e.kind,
                "line": e.span.line,
                "path": e.span.path,
                "target": e.target,
                "label": label,
                "findings": [],
            }
        )
    return out


def _finding_json(f, step_owned: bool) -> dict:
    return {
        "code": f.code,
        "name": f.name,
        "confidence": f.confidence,
        "line": f.span.line,
        "path": f.span.path,
        "message": f.message,
        "params": list(f.params),
        "on": "step" if step_owned else "node",
    }


def _at_event(f, step: Step):
    """The call of the iteration a finding points at (a step(), zero_grad(), scheduler or clip)."""
    for i, e in enumerate(step.events):
        if e.span.path == f.span.path and e.span.line == f.span.line and e.kind != EventKind.BACKWARD:
            return i
    return None


def _belongs(f, step: Step, params_by_name: dict) -> bool:
    """Whether a finding concerns this step: it names the step's `backward()` among its evidence,
    points at one of its cuts, or names parameters drawn in it."""
    for r in f.related:
        if r.span.path == step.span.path and r.span.line == step.span.line and r.span.col == step.span.col:
            return True
    if any(c.span == f.span for c in step.cuts) or _at_event(f, step) is not None:
        return True
    if step.span.path == f.span.path and step.span.line == f.span.line:
        return True
    return any(name in params_by_name for name in f.params)


def _step_graph(step: Step, findings, source) -> dict:
    reached = step.reached | step.reached_weak
    stepped = [o for o in step.optimizers if o.key in step.stepped]
    held_any = frozenset().union(*(o.params for o in step.optimizers)) if step.optimizers else frozenset()
    cut_params: dict = {}  # Param -> the cuts that removed it
    for c in step.cuts:
        for p in c.removed | c.removed_weak:
            cut_params.setdefault(p, []).append(c)

    involved = set(reached) | set(cut_params) | set(held_any) | set(step.frozen)
    involved = {p for p in involved if not p.opaque}
    params_by_name: dict = {}
    for p in involved:
        params_by_name.setdefault(p.name, []).append(p)
    mine = [f for f in findings if _belongs(f, step, params_by_name)]
    defect_cuts = {f.span for f in mine}

    # nodes: one per module, split where some of its parameters take part and others only sit in
    # an optimizer or behind a cut: a head replaced after the optimizer was built has new
    # parameters with the old names, and only the old ones are held
    groups: dict = {}
    for p in sorted(involved, key=lambda p: p.name):
        if p in reached:
            role = "frozen" if p in step.frozen else "reached"
        elif p in cut_params:
            role = "cut" if any(c.span in defect_cuts for c in cut_params[p]) else "stopped"
        elif p in step.frozen:
            role = "frozen"
        else:
            role = "unreached"
        live = role in ("reached", "frozen")
        groups.setdefault((p.module, live), ([], set()))
        groups[(p.module, live)][0].append(p)
        groups[(p.module, live)][1].add(role)

    rank = {"cut": 5, "stopped": 4, "unreached": 3, "reached": 2, "frozen": 1}
    built = []  # (node json, its Param objects)
    for (module, live), (params, roles) in groups.items():
        state = max(roles, key=lambda r: rank[r]) if not live else ("frozen" if roles == {"frozen"} else "reached")
        name = module
        twin = groups.get((module, not live))
        if twin is not None and not live:
            same_names = {p.name for p in params} & {p.name for p in twin[0]}
            name = f"{module} (earlier parameters)" if same_names else f"{module} ({state})"
        built.append(
            (
                {
                    "name": name,
                    "module": module,
                    "params": sorted(p.name for p in params),
                    "count": len(params),
                    # a lower bound: built in a loop the engine followed once (12 blocks seen as one)
                    "at_least": any(p.repeated for p in params),
                    "state": state,
                    "held_by": [i for i, o in enumerate(step.optimizers) if o.params & set(params)],
                    "cuts": sorted({f"{c.detail} (line {c.span.line})" for p in params for c in cut_params.get(p, ())}),
                    "optimized": any(set(params) & o.params for o in stepped),
                    "findings": [],
                },
                params,
            )
        )
    built.sort(key=lambda b: b[0]["name"])

    # each finding on the nodes whose parameters it names (where names repeat, the nodes made by
    # the statement it points at, or the cut it reports)
    placed = []
    events = _events(step, source)
    for f in sorted(mine, key=lambda f: (f.span.path, f.span.line, f.span.col, f.code)):
        # a finding about a call of the iteration (a step() that never sees zero_grad(), a
        # scheduler stepped first) goes on that call
        at = _at_event(f, step)
        if at is not None:
            where = (step.events[at].span.path, step.events[at].span.line)
            for ev in events:
                if (ev["path"], ev["line"]) == where and f.code not in ev["findings"]:
                    ev["findings"].append(f.code)
            placed.append(_finding_json(f, step_owned=True) | {"nodes": [], "on": "event"})
            continue
        targets = [(n, ps) for n, ps in built if set(n["params"]) & set(f.params)]
        if len(targets) > 1:
            exact = [
                (n, ps)
                for n, ps in targets
                if any(
                    p.span is not None and p.span.path == f.span.path and f.span.line <= p.span.line <= f.span.end_line
                    for p in ps
                )
            ]
            cut = [(n, ps) for n, ps in targets if n["state"] == "cut"]
            targets = exact or cut or targets
        for n, _ in targets:
            n["findings"].append(f.code)
        placed.append(_finding_json(f, step_owned=not targets) | {"nodes": sorted(n["name"] for n, _ in targets)})

    opts = []
    for o in step.optimizers:
        opts.append(
            {
                "name": o.name,
                "type": o.type,
                "line": o.span.line,
                "path": o.span.path,
                "stepped": o.key in step.stepped,
                "groups": [{"count": len(g.params), "options": list(g.options), "exact": g.exact} for g in o.groups],
            }
        )
    return {
        "loss": step.loss,
        "function": step.function,
        "line": step.span.line,
        "path": step.span.path,
        "nodes": [n for n, _ in built],
        "optimizers": opts,
        "events": events,
        "findings": placed,
        "unknown": step.top,
        "owner": module_of(reached) if reached else "",
    }


def graph(model: ProgramModel, findings=(), source=None) -> dict:
    """The training-step graph of an analysis: its model and its findings. `source(path)` gives a
    file's text (for the calls' own words), or None."""
    steps = [_step_graph(step, findings, source) for step in unique_steps(model)]
    shown = {(f["code"], f["path"], f["line"]) for s in steps for f in s["findings"]}
    others = [
        _finding_json(f, True) | {"nodes": []}
        for f in sorted(findings, key=lambda f: (f.span.path, f.span.line))
        if (f.code, f.span.path, f.span.line) not in shown
    ]
    return {"path": model.path, "steps": steps, "findings": others}

"""Section 1 of the audit: each training step as data, as text, and as a Mermaid flowchart.

Modules are the parameter owners the loss reaches (or that a cut removed), grouped two levels
below their root (`model.encoder`, `model.head`, `center_loss`); each is marked frozen, not
optimized, or cut off. Drawn left to right: the batch, the modules, the loss, `backward()`, the
optimizers stepped for it (a dotted "updated by" edge from each module they hold). A cut that
breaks training (a finding points at it) is a red `x` edge; a deliberate stop-gradient checked
as valid (a GAN's `fake.detach()`, a target network) is a grey edge ending in a bar, with its reason.
"""

from __future__ import annotations

import ast

from ..model.coverage import StepCoverage
from ..model.model import EventKind, ProgramModel, Step
from ..output.coverage import reason_text
from ..rules.common import describe
from ..source.prebuilt import dataclass
from ..source.span import at

_ORDER = ("zero_grad", "backward", "grad", "clip", "unscale", "step", "scaler_step", "scaler_update", "sched_step")
_EVENT_NAMES = {
    "zero_grad": "zero_grad",
    "backward": "backward",
    "grad": "autograd.grad",
    "step": "step",
    "sched_step": "scheduler.step",
    "clip": "clip_grad",
    "unscale": "scaler.unscale_",
    "scaler_update": "scaler.update",
    "scaler_step": "scaler.step",
}


@dataclass(frozen=True)
class CutEdge:
    """A cut between a module and the loss: a break, or a valid stop-gradient (`valid` says why)."""

    detail: str  # '.detach()'
    line: int
    valid: str = ""  # '' for a break; else why it is valid (the look-alike's judgement)
    kind: str = ""  # the look-alike's kind: "detached for another optimizer's step", ...
    path: str = ""  # its file (a helper module's cut is not on the step's file)


@dataclass(frozen=True)
class ModuleNode:
    name: str
    params: int
    reached: bool  # the loss reaches it
    cut: tuple  # CutEdge of the cuts that removed its parameters from this loss
    frozen: bool  # every parameter frozen at the backward()
    partly_frozen: bool
    optimized: tuple  # names of stepped optimizers holding it
    held_elsewhere: tuple  # optimizers holding it that are not stepped for this loss
    note: str = ""  # 'copy' (a target network), 'not registered' ...
    not_optimized: int = 0  # trainable parameters the loss reaches that no optimizer holds
    # `params` is a lower bound: parameters built in a loop the engine followed once (12 blocks
    # seen as one), or a library module's parameters it holds as one stand-in, are not all counted
    at_least: bool = False

    @property
    def unoptimized(self) -> bool:
        return self.not_optimized > 0

    def count(self, short: bool = False) -> str:
        """'6 parameters', 'at least 8 parameters', 'uncounted parameters'; short: '6 params', '≥8 params'."""
        n = self.params
        if short:
            return ("? params" if not n else f"≥{n} params") if self.at_least else f"{n} param{'s' if n != 1 else ''}"
        if self.at_least:
            return f"at least {n} parameter{'s' if n != 1 else ''}" if n else "an unknown number of parameters"
        return f"{n} parameter{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class OptimizerNode:
    name: str
    type: str
    line: int
    stepped: bool
    groups: tuple  # (options text, modules text, frozen) per group
    path: str = ""  # where it is built (nanoGPT's optimizer: model.py, for bench.py's step)


@dataclass(frozen=True)
class Event:
    kind: str
    line: int
    path: str
    target: str
    guarded: bool


@dataclass(frozen=True)
class StepGraph:
    id: str  # 's1', 's2', ... in report order
    path: str
    line: int
    function: str
    loss: str
    loss_line: int
    loss_text: str
    inputs: tuple  # names of the batch's variables
    source: str  # what they come from ('loader', 'range(3)') or ''
    modules: tuple  # ModuleNode
    optimizers: tuple  # OptimizerNode
    events: tuple  # Event
    accumulation: str  # '' or a sentence
    unknown: bool  # the loss may reach parameters the engine cannot see
    loss_path: str = ""  # the file of the loss's line
    coverage: StepCoverage | None = None  # what of the step was understood, and why not the rest

    @property
    def understood(self) -> bool:
        return self.coverage is None or self.coverage.understood

    def order(self) -> str:
        kinds: list[str] = []
        for e in self.events:
            if e.kind in _ORDER and (not kinds or kinds[-1] != e.kind):
                kinds.append(e.kind)
        return " -> ".join(_EVENT_NAMES.get(k, k) for k in kinds)


def group_of(module: str) -> str:
    """`model.encoder.body.0` -> `model.encoder`, `discriminator.0` -> `discriminator`: the root and
    its first named child (indices of Sequential/ModuleList are layers, not parts)."""
    parts = module.replace("[]", "").split(".")
    out = parts[:1]
    if len(parts) > 1 and not parts[1].isdigit():
        out.append(parts[1])
    return ".".join(out)


def _loop_inputs(tree, loop_line: int):
    """The batch's names and what they come from, for a `for` loop; a counting loop has no batch."""
    if tree is None:
        return (), ""
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor)) and node.lineno == loop_line:
            source = ast.unparse(node.iter)
            it = node.iter
            if (
                isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id in ("range", "enumerate")
                and (
                    it.func.id == "range"
                    or (it.args and isinstance(it.args[0], ast.Call) and getattr(it.args[0].func, "id", "") == "range")
                )
            ):
                return (), source
            names = tuple(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
            return names, source
    return (), ""


def stop_gradient(model: ProgramModel, step: Step, c) -> tuple[str, str] | None:
    """(kind, why) when the cut `c` of this step is a valid stop-gradient; None when it keeps
    parameters this step trains from the loss (a break)."""
    reach = step.reached | step.reached_weak | step.co_reached
    held: set = set()
    for o in step.optimizers:
        if o.key in step.stepped:
            held |= o.params
    removed = c.removed | c.removed_weak
    what = describe(removed) if removed else "no parameter"
    other = [o for o in step.optimizers if o.key not in step.stepped and o.params & removed]
    if removed and removed <= reach:
        return (
            "stop-gradient with another path",
            f"`{c.detail}` cuts one path, but {what} still reach `{step.loss}` by another",
        )
    if removed and other and not (removed & held):
        return (
            "detached for another optimizer's step",
            f"`{c.detail}` keeps {what} (optimized by `{other[0].name}`, not stepped for `{step.loss}`) "
            f"out of this loss: the GAN discriminator-step pattern",
        )
    if removed and all(p.origin for p in removed):
        return "target network", f"`{c.detail}` cuts {what}, a copy no optimizer holds"
    if removed and not (removed & held) and not any(removed & o.params for o in model.optimizers):
        return "module no optimizer holds", f"`{c.detail}` cuts {what}, which no optimizer trains"
    if removed and removed <= step.frozen:
        return "frozen parameters", f"`{c.detail}` cuts {what}, which are frozen anyway"
    if not removed:
        return "cut of a value without gradient", f"`{c.detail}` applies to a value that carries no gradient"
    return None


def step_graph(
    sid: str, model: ProgramModel, step: Step, files: dict, flagged=frozenset(), cov: StepCoverage | None = None
) -> StepGraph:
    """`flagged`: the (path, line) places findings point at; a cut there is a break. `cov`: the
    step's coverage; a step not understood draws no module as "not optimized" (no verdict on it)."""
    understood = cov.understood if cov is not None else step.understood
    reach = step.reached | step.reached_weak
    stepped = [o for o in step.optimizers if o.key in step.stepped]
    others = [o for o in step.optimizers if o.key not in step.stepped]
    cut_by: dict = {}
    for c in step.cuts:
        judged = None if (c.span.path, c.span.line) in flagged else stop_gradient(model, step, c)
        edge = CutEdge(c.detail, c.span.line, *(judged[::-1] if judged else ("", "")), c.span.path)
        for p in (c.removed | c.removed_weak) - reach:
            cut_by.setdefault(group_of(p.module), set()).add(edge)
    groups: dict = {}
    cut_params = {p for c in step.cuts for p in c.removed | c.removed_weak}
    for p in reach | cut_params:
        groups.setdefault(group_of(p.module), set()).add(p)
    for o in stepped:
        for p in o.params:
            groups.setdefault(group_of(p.module), set()).add(p)
    unreg = {p for u in model.unregistered for p in u.params}
    any_held: set = set()
    for o in model.optimizers + step.optimizers:
        any_held |= o.params
    nodes = []
    for name, ps in sorted(groups.items()):
        frozen = {p for p in ps if p in step.frozen}
        # the parameters this loss touches (a module replaced after the optimizer was built keeps its
        # name; the optimizer may hold only the old ones)
        live = {p for p in ps if p in reach or p in cut_params} or ps
        held = tuple(o.name for o in stepped if o.params & live)
        elsewhere = tuple(o.name for o in others if o.params & live)
        note = "copy" if ps and all(p.origin for p in ps) else ("not registered" if ps & unreg else "")
        loose = {
            p
            for p in ps & reach
            if p not in any_held and p not in frozen and not p.origin and p not in model.manual and p.kind != "input"
        }
        if not understood:
            loose = set()
        count = len({p.name for p in ps if not p.opaque})
        at_least = any(p.opaque or p.repeated for p in ps)
        nodes.append(
            ModuleNode(
                name,
                count,
                bool(ps & reach),
                tuple(sorted(cut_by.get(name, ()), key=lambda x: (x.line, x.detail))),
                bool(ps) and frozen == ps,
                bool(frozen) and frozen != ps,
                held,
                elsewhere,
                note,
                len({p.name for p in loose}),
                at_least,
            )
        )
    opts = []
    for o in step.optimizers:
        gs = []
        for g in o.groups:
            gs.append(
                (
                    ", ".join(g.options),
                    describe(g.params) if g.params else "no known parameter",
                    bool(g.params) and all(p in step.frozen for p in g.params),
                )
            )
        opts.append(OptimizerNode(o.name, o.type, o.span.line, o.key in step.stepped, tuple(gs), o.span.path))
    events = tuple(
        Event(e.kind, e.span.line, e.span.path, e.target, e.guarded) for e in step.events if e.kind in _ORDER
    )
    sf = files.get(step.span.path)
    inputs, source = _loop_inputs(sf.tree if sf is not None else None, step.loop.line) if step.loop else ((), "")
    loss_text = ""
    loss_line = 0
    if step.loss_span is not None:
        lf = files.get(step.loss_span.path)
        loss_line = step.loss_span.line
        if lf is not None:
            loss_text = " ".join(lf.line_text(step.loss_span.line).split())
    guarded = [e for e in step.events if e.kind == EventKind.STEP and e.guarded and e.target_key in step.stepped]
    accumulation = ""
    if guarded:
        accumulation = (
            f"`{guarded[0].target}.step()` runs under a condition ({guarded[0].span.at(step.span.path)}): "
            "gradients of several backward() calls add up before each step"
        )
    return StepGraph(
        sid,
        step.span.path,
        step.span.line,
        step.function,
        step.loss,
        loss_line,
        loss_text,
        inputs,
        source,
        tuple(nodes),
        tuple(opts),
        events,
        accumulation,
        step.top,
        step.loss_span.path if step.loss_span is not None else "",
        cov,
    )


# ------------------------------------------------------------------ text


def text(g: StepGraph) -> list[str]:
    out = [f"`{g.loss}.backward()` in `{g.function}` ({g.path}:{g.line})"]
    if g.inputs:
        out.append(f"- inputs: {', '.join(f'`{n}`' for n in g.inputs)}" + (f" from `{g.source}`" if g.source else ""))
    elif g.source:
        out.append(f"- loop over `{g.source}`")
    for m in g.modules:
        marks = _marks(m, g.path)
        out.append(f"- module `{m.name}` ({m.count()})" + (f": {'; '.join(marks)}" if marks else ""))
    if g.unknown:
        out.append("- the loss may also reach parameters the engine cannot see (calls it did not follow)")
    if g.loss_text:
        out.append(f"- loss: `{g.loss_text}` ({at(g.loss_path, g.loss_line, g.path)})")
    out.append(f"- `backward()` at line {g.line}")
    for o in g.optimizers:
        stepped = " stepped for this loss" if o.stepped else ""
        head = f"- optimizer `{o.name}` ({o.type}, {at(o.path, o.line, g.path)}){stepped}"
        out.append(head + ":" if o.groups else head)
        for i, (opts, held, frozen) in enumerate(o.groups):
            out.append(f"  - group {i}{f' ({opts})' if opts else ''}: {held}{' — all frozen' if frozen else ''}")
    if g.coverage is not None and any(r.what == "optimizer" for r in g.coverage.reasons):
        out.append("- the optimizer stepped for this loss is not one the engine knows (below)")
    elif not any(o.stepped for o in g.optimizers):
        out.append("- no optimizer is stepped for this loss")
    order = g.order()
    if order:
        out.append(f"- one iteration: {order}")
    if g.accumulation:
        out.append(f"- accumulation: {g.accumulation}")
    if g.coverage is not None and g.coverage.understood:
        out.append(f"- understood: {', '.join(g.coverage.parts())}")
    elif g.coverage is not None:
        out.append("- **not understood**: no verdict is made on this step")
        out += [f"  - {reason_text(r)}" for r in g.coverage.reasons]
    return out


def _marks(m: ModuleNode, here: str = "") -> list[str]:
    marks = []
    if m.reached:
        marks.append("reached by the loss")
    for c in m.cut:
        if c.valid:
            marks.append(
                f"stopped by `{c.detail}` at {at(c.path, c.line, here)}, a deliberate stop-gradient that is valid: "
                f"{c.kind}"
            )
        else:
            marks.append(f"**cut** by `{c.detail}` at {at(c.path, c.line, here)}")
    if m.frozen:
        marks.append("frozen")
    elif m.partly_frozen:
        marks.append("partly frozen")
    if m.optimized:
        marks.append("optimized by " + ", ".join(f"`{o}`" for o in m.optimized))
    if m.held_elsewhere:
        marks.append("held by " + ", ".join(f"`{o}`" for o in m.held_elsewhere) + " (not stepped for this loss)")
    if m.unoptimized:
        marks.append(
            "**not optimized**"
            if m.not_optimized >= m.params and not m.at_least
            else f"**{m.not_optimized} parameter{'s' if m.not_optimized != 1 else ''} not optimized**"
        )
    if m.note == "copy":
        marks.append("a copy (target network)")
    elif m.note:
        marks.append(m.note)
    return marks


# ------------------------------------------------------------------ mermaid


def _label(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;").replace("`", "'")


def mermaid(g: StepGraph) -> str:
    """A flowchart that GitHub, VS Code's Markdown preview (with Mermaid) and mermaid.js render."""
    p = g.id
    lines = ["flowchart LR"]
    edges: list[tuple[str, str | None]] = []  # (text, style or None)
    inputs = ", ".join(g.inputs) if g.inputs else (f"loop: {g.source}" if g.source else "inputs")
    lines.append(f'  {p}_in[/"{_label(inputs)}"/]')
    for i, m in enumerate(g.modules):
        tag = []
        if m.frozen:
            tag.append("frozen")
        if m.unoptimized:
            tag.append("not optimized")
        if m.note == "copy":
            tag.append("copy")
        extra = f"<br/>({', '.join(tag)})" if tag else ""
        lines.append(f'  {p}_m{i}["{_label(m.name)}<br/>{_label(m.count(short=True))}{extra}"]')
    lines.append(f'  {p}_loss(["{_label(g.loss or "loss")}"])')
    lines.append(f'  {p}_bw{{{{"backward() line {g.line}"}}}}')
    for j, o in enumerate(g.optimizers):
        if o.stepped:
            lines.append(f'  {p}_o{j}[["{_label(o.name)} · {_label(o.type)}"]]')
    for i, m in enumerate(g.modules):
        edges.append((f"  {p}_in --> {p}_m{i}", None))  # (line, style)
        if m.reached:
            edges.append((f"  {p}_m{i} --> {p}_loss", None))
        for c in m.cut:
            if c.valid:
                edges.append(
                    (
                        f'  {p}_m{i} -.-o|"stop-gradient (valid): {_label(c.detail)} {at(c.path, c.line, g.path)}"| '
                        f"{p}_loss",
                        "stop",
                    )
                )
            else:
                edges.append(
                    (f'  {p}_m{i} -.-x|"cut: {_label(c.detail)} {at(c.path, c.line, g.path)}"| {p}_loss', "cut")
                )
    edges.append((f"  {p}_loss --> {p}_bw", None))
    for j, o in enumerate(g.optimizers):
        if not o.stepped:
            continue
        edges.append((f"  {p}_bw --> {p}_o{j}", None))
        for i, m in enumerate(g.modules):
            if o.name in m.optimized:
                # drawn from the module so that the layout keeps modules left of the loss
                edges.append((f'  {p}_m{i} -.-|"updated by"| {p}_o{j}', "holds"))
    lines += [e for e, _ in edges]
    for k, (_, style) in enumerate(edges):
        if style == "cut":
            lines.append(f"  linkStyle {k} stroke:#c62828,stroke-width:2px,stroke-dasharray:4 3")
        elif style == "stop":
            lines.append(f"  linkStyle {k} stroke:#607d8b,stroke-width:1.5px,stroke-dasharray:4 3")
        elif style == "holds":
            lines.append(f"  linkStyle {k} stroke:#757575,stroke-dasharray:2 3")
    lines.append("  classDef frozen fill:#e3f2fd,stroke:#1565c0,stroke-dasharray:4 3")
    lines.append("  classDef unoptimized fill:#ffebee,stroke:#c62828,stroke-width:2px")
    lines.append("  classDef copy fill:#f5f5f5,stroke:#9e9e9e")
    for i, m in enumerate(g.modules):
        cls = "unoptimized" if m.unoptimized else "frozen" if m.frozen else "copy" if m.note == "copy" else ""
        if cls:
            lines.append(f"  class {p}_m{i} {cls}")
    return "\n".join(lines)

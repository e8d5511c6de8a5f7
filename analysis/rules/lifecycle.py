"""What the lifecycle and backward rules (GA2xx, GA3xx) ask of the training-step model: the events
of one loop iteration, which of them always run, which optimizer and parameters they concern."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Set

from ..model.findings import Edit, Finding, Related
from ..model.model import Event, EventKind, Optimizer, Param, ProgramModel, Span, Step
from ..source import nodes
from .base import RuleContext

BACKWARDS = (EventKind.BACKWARD, EventKind.GRAD)
Loop = ast.For | ast.While | ast.AsyncFor
Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def optimizers(model: ProgramModel) -> dict[int, Optimizer]:
    return {o.key: o for o in model.optimizers}


def own_event(step: Step) -> Event | None:
    """The backward() event of a step among its iteration's events."""
    return next((e for e in step.events if e.seq == _seq_of(step)), None)


def _seq_of(step: Step) -> int:
    # asked per rule and per event of the iteration: kept per step (timm's 48 steps, 550 events each)
    held = _SEQS.get(id(step))
    if held is not None and held[0] is step:
        return held[1]
    seq = next((e.seq for e in step.events if e.kind in BACKWARDS and e.span == step.span), -1)
    if len(_SEQS) > 1024:
        _SEQS.clear()
    _SEQS[id(step)] = (step, seq)
    return seq


_SEQS: dict[int, tuple[Step, int]] = {}


def in_iteration(event: Event, loops: tuple[int, ...]) -> bool:
    """`event` ran in the iteration identified by `loops` (or in a loop nested in it)."""
    return event.loops[: len(loops)] == loops


def steps_of(events: Iterable[Event], key: int) -> list[Event]:
    if not isinstance(events, tuple):
        return [e for e in events if e.kind == EventKind.STEP and e.target_key == key]
    # a step's events are asked for again and again (per rule, per optimizer, per step sharing
    # the iteration): the STEP events are indexed once per events tuple
    held = _STEPS.get(id(events))
    if held is None or held[0] is not events:
        if len(_STEPS) > 256:
            _STEPS.clear()
        index: dict[int, list[Event]] = {}
        for e in events:
            if e.kind == EventKind.STEP:
                index.setdefault(e.target_key, []).append(e)
        held = _STEPS[id(events)] = (events, index)
    return list(held[1].get(key, ()))


_STEPS: dict[int, tuple[tuple, dict[int, list[Event]]]] = {}


def clears(event: Event, params: Set[Param], opt: Optimizer | None = None) -> bool:
    """A zero_grad()/`p.grad = None` that clears some of `params` (or `opt` itself; any module's
    when the optimizer's parameters are not known exactly)."""
    if event.kind != EventKind.ZERO_GRAD:
        return False
    if event.detail == "unseen" and (opt is None or not opt.complete):
        return True  # `model.zero_grad()` of a model the engine cannot see: whatever it holds
    if event.detail == "grad=None" and not event.params and (opt is None or not opt.complete):
        return True  # `p.grad = None` for each parameter of a network the engine cannot see
    if opt is not None and event.target and any(event.target in g.sources for g in opt.groups):
        return True  # `netD.zero_grad()` with `optD` built from `netD.parameters()`, whatever netD holds
    if opt is not None and (
        event.target_key == opt.key or (not opt.complete and event.target_key != 0 and event.detail != "grad=None")
    ):
        return True
    return bool(event.params & params)


def under_counter(model: ProgramModel, step: Step, events: list[Event]) -> bool:
    """Every one of `events` (an optimizer's steps in `step`'s iteration) runs under a condition on
    a counter of that iteration (`if (i + 1) % n == 0:`), not under a configuration flag."""
    level = len(step.loops)
    return all(e.guarded and any(k in model.counters for k, _ in e.guards_in(level)) for e in events)


_MODULO = re.compile(r"%\s*([A-Za-z_][\w.]*)")


def modulo_divisor(ctx: RuleContext, event: Event) -> str | None:
    """`accum_steps` of an `if (i + 1) % accum_steps == 0:` holding `event` (a step of an
    accumulation)."""
    for first, last, divisor in _modulo_blocks(ctx, event.span.path):
        if first <= event.span.line <= last:
            return divisor
    return None


# the divisor of a `with accelerator.accumulate(model):` block
ACCELERATE_STEPS = "gradient_accumulation_steps"


def _modulo_blocks(ctx: RuleContext, path: str) -> list[tuple[int, int, str]]:
    """The lines of each `if ... % name ...:` body in `path` (or `if update:` of a flag its function
    assigned such a test) and its divisor, in `ast.walk` order: found once per file (a walk per
    event cost a fifth of yolov5's train.py)."""
    key = f"modulo-blocks:{path}"
    found = ctx.cache.get(key)
    if found is None:
        found = []
        flags: dict[int, dict[str, str]] = {}  # id(scope) -> {flag: divisor}
        blocks: list[tuple[ast.If | ast.With | ast.AsyncWith, ast.AST, str | None]] = []
        for node, scope in _scoped(ctx.tree(path)):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and (flag := _flag_key(node.targets[0])):
                m = _MODULO.search(ctx.text_of_node(path, node.value) or "")
                if m:
                    flags.setdefault(id(scope), {})[flag] = m.group(1)
            elif isinstance(node, ast.If) and node.body:
                m = _MODULO.search(ctx.text_of_node(path, node.test) or "")
                blocks.append((node, scope, m.group(1) if m else None))
            elif (
                isinstance(node, (ast.With, ast.AsyncWith))
                and node.body
                and any(nodes.accumulates(i.context_expr) for i in node.items)
            ):
                # `with accelerator.accumulate(model):` steps every `gradient_accumulation_steps`
                blocks.append((node, scope, ACCELERATE_STEPS))
        for node, scope, divisor in blocks:
            if divisor is None and isinstance(node, ast.If):
                divisor = _flag_divisor(node.test, flags.get(id(scope)))
            if divisor:
                found.append((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno, divisor))
        ctx.cache[key] = found
    return found


_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _scoped(tree: ast.AST | None) -> Iterator[tuple[ast.AST, ast.AST]]:
    """Each node of `tree` in `ast.walk` order, with the innermost function, class or module
    holding it."""
    if tree is None:
        return
    scope_of = {id(tree): tree}
    for node in ast.walk(tree):
        scope = scope_of.pop(id(node), tree)  # (expression contexts, `Load()`, are shared nodes)
        inner = node if isinstance(node, _SCOPES) else scope
        for child in ast.iter_child_nodes(node):
            scope_of[id(child)] = inner
        yield node, scope


def _flag_key(target: ast.AST) -> str | None:
    """`update` or `self.update` as an assignment target or a test."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return f"{target.value.id}.{target.attr}"
    return None


def _flag_divisor(test: ast.expr, flags: dict[str, str] | None) -> str | None:
    """The divisor of the counter an `if update:` (or `if update and ...:`) tests, `update`
    assigned a modulo test in the same function."""
    if not flags:
        return None
    for n in [test] if not isinstance(test, ast.BoolOp) else test.values:
        key = _flag_key(n)
        if key is not None and key in flags:
            return flags[key]
    return None


def step_by_seq(model: ProgramModel) -> dict[int, Step]:
    out = {}
    for s in model.steps:
        e = own_event(s)
        if e is not None:
            out[e.seq] = s
    return out


def first_by_span(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per anchor, the first (confirmed before suspicious)."""
    seen: set[tuple[str, int, int]] = set()
    out: list[Finding] = []
    for f in sorted(findings, key=lambda f: f.confidence != "confirmed"):
        key = (f.span.path, f.span.line, f.span.col)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def call_of(opt: Optimizer | None, method: str) -> str:
    """`optimizer.step()`, or "the optimizer's step()" when it has no name."""
    if opt is not None and not opt.name.startswith("<"):
        return f"`{opt.name}.{method}()`"
    return f"the optimizer's {method}()"


def name_of(opt: Optimizer | None) -> str:
    return f"`{opt.name}`" if opt is not None and not opt.name.startswith("<") else "the optimizer"


# ---------------------------------------------------------------- statements, for fixes

_BLOCKS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.If,
    ast.With,
    ast.AsyncWith,
    ast.Try,
)


def statement_at(ctx: RuleContext, span: Span) -> tuple[ast.stmt, list[ast.stmt]] | tuple[None, None]:
    """The innermost simple statement holding `span`'s first line, and the body list it sits in."""
    tree = ctx.tree(span.path)
    if tree is None:
        return None, None
    best: tuple[ast.stmt, list[ast.stmt]] | tuple[None, None] = (None, None)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for stmt in body:
                if (
                    isinstance(stmt, ast.stmt)
                    and not isinstance(stmt, _BLOCKS)
                    and stmt.lineno <= span.line <= (stmt.end_lineno or stmt.lineno)
                ) and (best[0] is None or stmt.lineno >= best[0].lineno):
                    best = (stmt, body)
    return best


def whole_lines(ctx: RuleContext, path: str, stmt: ast.stmt) -> tuple[int, int] | None:
    """(first, last) line of a statement that has its lines to itself."""
    return ctx.statement_lines(
        Span(path, stmt.lineno, stmt.col_offset, stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    )


def statement_text(ctx: RuleContext, path: str, first: int, last: int) -> list[str]:
    return [ctx.line(path, n) for n in range(first, last + 1)]


def move_statement(ctx: RuleContext, path: str, stmt: ast.stmt, after: ast.stmt) -> tuple[Edit, Edit] | None:
    """Edits moving `stmt` to just after the statement `after` (both whole-line statements of one
    file), re-indented to `after`'s indentation."""
    src = whole_lines(ctx, path, stmt)
    dst = whole_lines(ctx, path, after)
    if src is None or dst is None or src[0] <= dst[1] < src[1]:
        return None
    lines = statement_text(ctx, path, *src)
    old_indent = ctx.indent_of(path, src[0])
    new_indent = ctx.indent_of(path, dst[0])
    moved = "".join(
        new_indent + line[len(old_indent) :] + "\n" if line.startswith(old_indent) else line + "\n" for line in lines
    )
    at = Span(path, dst[1] + 1, 0, dst[1] + 1, 0)
    return (ctx.delete_lines(path, *src), ctx.replace(at, moved))


def insert_before(ctx: RuleContext, path: str, stmt: ast.stmt, text: str) -> Edit | None:
    """An edit inserting the line `text` before `stmt`, at its indentation."""
    lines = whole_lines(ctx, path, stmt)
    if lines is None:
        return None
    indent = ctx.indent_of(path, lines[0])
    return ctx.replace(Span(path, lines[0], 0, lines[0], 0), f"{indent}{text}\n")


def insert_after(ctx: RuleContext, path: str, stmt: ast.stmt, text: str) -> Edit | None:
    lines = whole_lines(ctx, path, stmt)
    if lines is None:
        return None
    indent = ctx.indent_of(path, lines[0])
    return ctx.replace(Span(path, lines[1] + 1, 0, lines[1] + 1, 0), f"{indent}{text}\n")


def _loops_and_functions(ctx: RuleContext, path: str) -> tuple[list[Loop], list[Function]] | None:
    """Every loop and every function of a file, walked once per check (rules ask for many spans)."""
    key = "loops:" + path
    cached = ctx.cache.get(key)
    if cached is None:
        tree = ctx.tree(path)
        if tree is None:
            return None
        loops: list[Loop] = []
        functions: list[Function] = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.For, ast.While, ast.AsyncFor)) and node.body:
                loops.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                functions.append(node)
        cached = ctx.cache[key] = (loops, functions)
    return cached


def loop_of(ctx: RuleContext, span: Span) -> Loop | None:
    """The innermost for/while loop whose body holds `span`, in the same function."""
    found = _loops_and_functions(ctx, span.path)
    if found is None:
        return None
    loops, functions = found
    best: Loop | None = None
    for node in loops:
        if (node.body[0].lineno <= span.line <= (node.body[-1].end_lineno or node.body[-1].lineno)) and (
            best is None or node.lineno >= best.lineno
        ):
            best = node
    if best is None:
        return None
    for f in functions:
        # a function defined inside the loop that holds the span: not this loop's code
        if (
            best.lineno <= f.lineno
            and (f.end_lineno or f.lineno) <= (best.end_lineno or best.lineno)
            and f.lineno <= span.line <= (f.end_lineno or f.lineno)
        ):
            return None
    return best


def receiver(text: str, method: str) -> str | None:
    """`opt` of `opt.step()`: the receiver text of a call to `method` with no arguments."""
    m = re.fullmatch(r"\s*(.+?)\s*\.\s*" + method + r"\s*\((.*)\)\s*", text, re.S)
    return m.group(1) if m else None


_SHOWN = {
    "zero_grad": "zero_grad()",
    "backward": "backward()",
    "grad": "torch.autograd.grad()",
    "step": "step()",
    "sched_step": "scheduler.step()",
    "clip": "gradient clipping",
    "unscale": "scaler.unscale_()",
    "scaler_update": "scaler.update()",
}


def iteration_related(events: Iterable[Event], skip: Iterable[Span | None] = ()) -> tuple[Related, ...]:
    """The lifecycle calls of one iteration as related locations, in order (an editor shows the
    sequence the rule checked next to the diagnostic)."""
    out, seen = [], {(s.path, s.line, s.col) for s in skip if s is not None}
    for _n, e in enumerate(sorted(events, key=lambda e: e.seq), 1):
        label = _SHOWN.get(e.kind)
        key = (e.span.path, e.span.line, e.span.col)
        if label is None or key in seen:
            continue
        seen.add(key)
        who = (
            f"`{e.target}` "
            if e.target and not e.target.startswith("<") and e.kind in (EventKind.ZERO_GRAD, EventKind.STEP)
            else ""
        )
        cond = " (under a condition)" if e.guarded else ""
        out.append(Related(e.span, f"in this iteration: {who}{label}{cond}"))
    return tuple(out)


def if_blocks(ctx: RuleContext, path: str, arms: bool = False) -> list[tuple[int, int, int, str]]:
    """(first, last line of the body, line, test as written) of every `if` in `path`, found once per
    file for every rule that asks (a walk per event is what lifecycle._modulo_blocks was cached
    against); `arms`: each `else` arm too, its test written `not (test)`."""
    key = f"if-blocks:{path}"
    found = ctx.cache.get(key)
    if found is None:
        tree = ctx.tree(path)
        bodies, elses = [], []
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.If) or not node.body:
                continue
            test = ast.unparse(node.test)
            bodies.append((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno, node.lineno, test))
            if node.orelse:
                last = node.orelse[-1].end_lineno or node.orelse[-1].lineno
                elses.append((node.orelse[0].lineno, last, node.lineno, f"not ({test})"))
        found = ctx.cache[key] = (bodies, bodies + elses)
    return found[1] if arms else found[0]

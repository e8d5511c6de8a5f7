"""Coverage: which training steps the engine understood, and why not the others.

A step is understood when the engine can name parameters its loss reaches, and, when the code
steps an optimizer for that loss, knows the optimizer and the parameters it holds. What it did
not understand is recorded on the step as `Reason`s (model.py), each with why:

- `budget`: a budget (a setting) ran out: the step was never reached, or a call on its way was
  not followed;
- `unknown library`: the value comes from a library that is not installed in the environment read;
- `unknown arguments`: the value is an argument of a function run on unknown arguments (nothing
  the engine followed calls it);
- `unresolved call`: the value comes from a call the engine could not follow.

The why is found by following the names in the source back from where the engine lost the value
(an `optimizer.step()` on an unknown object, the call the loss was computed through) to an
argument, an import or a call. `backward()` calls in code a budget kept the analysis from reaching
are `MissedStep`s of the model. Every output reads the same records (`records`, `merge`).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..interp.budget import TIME, Gaps
from ..libraries.imported import LibraryUse
from ..source.prebuilt import dataclass, replace
from ..source.program import SourceFile
from ..source.span import Span
from .model import MissedStep, Param, ProgramModel, Reason, Step

# (why, the cause in words, the budget that ran out or '', a better place to point at or None)
Why = tuple[str, str, str, "Span | None"]

BUDGET, UNRESOLVED, LIBRARY, ARGUMENTS = "budget", "unresolved call", "unknown library", "unknown arguments"
WHYS = (BUDGET, UNRESOLVED, LIBRARY, ARGUMENTS)
STEP, PARAMETERS, OPTIMIZER = "step", "parameters", "optimizer"

_STEP_EVENTS = ("step", "sched_step")
_MAX_HOPS = 6


# ------------------------------------------------------------------ the decision


def judge(
    model: ProgramModel, files: dict, gaps: Gaps | None = None, libraries: LibraryUse | None = None
) -> ProgramModel:
    """The model with each step's `not_understood` filled in and the steps a budget left out.

    `files`: path -> SourceFile of what the analysis read; `gaps`: the run's budget.Gaps;
    `libraries`: the imported.LibraryUse of the environment read (what is installed, what not)."""
    ctx = _Context(files, gaps, libraries, model)
    steps = tuple(replace(s, not_understood=ctx.reasons(s)) for s in model.steps)
    return replace(model, steps=steps, missed=ctx.missed())


class _Context:
    def __init__(self, files: dict, gaps: Gaps | None, libraries: LibraryUse | None, model: ProgramModel) -> None:
        self.files = files
        self.gaps = gaps
        self.missing = frozenset(libraries.missing) if libraries is not None else frozenset()
        self.found = frozenset(libraries.found) if libraries is not None else frozenset()
        self.env = libraries.where() if libraries is not None else ""
        self.model = model
        self.entry = "script"  # how the step being judged was reached
        self._sources: dict = {}
        self._cache: dict = {}
        self._known: dict[str, bool] = {}  # a stand-in's module path -> whether a library model is known
        # functions whose calls a budget did not follow, by name
        self.cut: dict = {}
        if gaps is not None:
            for fn, budget in gaps.calls_cut.items():
                name = getattr(getattr(fn, "node", None), "name", "")
                if name:
                    self.cut.setdefault(name, TIME if gaps.stopped else budget)
        self.event_places = {(e.span.path, e.span.line, e.span.col) for e in model.events}

    def source(self, path: str) -> _Source | None:
        src = self._sources.get(path)
        if src is None:
            sf = self.files.get(path)
            if sf is None:
                return None
            src = self._sources[path] = _Source(sf)
        return src

    # ------------------------------------------------------------ one step

    def reasons(self, step: Step) -> tuple:
        key = (step.span, step.seq)
        out = self._cache.get(key)
        if out is None:
            self.entry = step.entry
            params = self._parameters(step)
            out = self._cache[key] = tuple(params + self._optimizer(step, not params))
        return out

    def known(self, p: Param) -> bool:
        """A parameter the engine can name, or the stand-in for the parameters of a library model it
        knows (from the library's source or its table): wiring is judged at that model's level."""
        if not p.opaque:
            return True
        got = self._known.get(p.module)
        if got is None:
            got = self._known[p.module] = any(
                p.module == lib.path or p.module.startswith(lib.path + ".") for lib in self.model.libraries
            )
        return got

    def _parameters(self, step: Step) -> list:
        cut = {p for c in step.cuts for p in c.removed | c.removed_weak}
        if step.requires_no_grad or any(self.known(p) for p in step.reached | step.reached_weak | step.inputs | cut):
            return []  # (a loss certainly without gradient is the rules' to judge)
        opaque = sorted((p for p in step.reached | step.reached_weak if p.opaque), key=lambda p: p.name)
        if not opaque and not step.top and not step.unseen:
            return []  # the loss certainly reaches no parameter: the rules judge that
        places = []
        if step.unseen_span is not None:
            places.append((step.unseen_span, step.unseen))
        for p in opaque:
            if p.span is not None:
                places.append((p.span, p.module))
        out, seen = [], set()
        for span, text in places:
            why, cause, budget, at = self.why_at(span, text, step)
            if why in seen:
                continue  # one explanation per why: the first place the engine lost the value
            seen.add(why)
            out.append(Reason(PARAMETERS, why, cause, at or span, budget))
        if not out:
            out.append(Reason(PARAMETERS, UNRESOLVED, "the loss is computed by code the engine did not see"))
        return out

    def _optimizer(self, step: Step, params_known: bool) -> list:
        known = {o.key: o for o in step.optimizers}
        out = []
        stepped = [known[k] for k in step.stepped if k in known]
        for e in step.events:
            if e.kind == "step" and e.target_key in step.stepped and e.target_key not in known:
                if "sched" in e.target.lower():
                    continue  # a learning-rate scheduler's step() on an unknown object
                out.append(self._unknown_step(step, e.span, e.target or "the optimizer"))
        if not step.stepped:
            for span, receiver in self._silent_steps(step):
                out.append(self._unknown_step(step, span, receiver))
        for o in stepped:
            if o.duck:
                # taken for an optimizer (both zero_grad() and step() are called on it): still
                # not known as one, nor what it holds
                call = next((e for e in step.events if e.kind == "step" and e.target_key == o.key), None)
                if call is not None:
                    out.append(self._unknown_step(step, call.span, call.target or o.name))
                continue
            named = [p for p in o.params if self.known(p)]
            if named or not o.groups or not params_known:
                continue  # (unknown parameters of the loss's model: said once, as the parameters)
            g = o.groups[0]
            why, cause, budget, at = self.why_at(g.span, "", step)
            out.append(
                Reason(
                    OPTIMIZER,
                    why,
                    f"`{o.name}` ({o.type}) holds parameters the engine cannot name: {cause}",
                    at or g.span,
                    budget,
                )
            )
        return _unique(out)

    def _unknown_step(self, step: Step, span: Span, receiver: str) -> Reason:
        why, cause, budget, at = self.why_at(span, "", step, receiver_of_call=True)
        line = span.at(step.span.path)
        return Reason(
            OPTIMIZER,
            why,
            f"`{receiver}.step()` ({line}) steps an object the engine does not know as an optimizer: {cause}",
            span,
            budget,
        )

    def _silent_steps(self, step: Step) -> list:
        """`x.step()` calls around the backward() that recorded nothing: an optimizer the engine
        could not see (built by an unknown factory, handed in from outside)."""
        src = self.source(step.span.path)
        if src is None:
            return []
        scope = step.loop or src.function_span(step.span.line)
        if scope is None:
            return []
        out = []
        for node in src.calls_in(scope.line, scope.end_line):
            f = node.func
            if not (isinstance(f, ast.Attribute) and f.attr == "step"):
                continue
            span = src.span(node)
            if (span.path, span.line, span.col) in self.event_places:
                continue
            receiver = src.sf.segment(f.value)
            if "sched" in receiver.lower():
                continue  # a learning-rate scheduler's step(): not the optimizer's
            out.append((span, receiver))
        return out[:1]

    # ------------------------------------------------------------ why, from the source

    def why_at(self, span: Span, text: str, step: Step, receiver_of_call: bool = False) -> Why:
        """(why, cause, budget, span) for the value made at `span` (a call, an argument's function)."""
        src = self.source(span.path)
        if src is None:
            return UNRESOLVED, f"`{text}` is computed in code the engine did not see", "", None
        node = src.node_at(span)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if text.isidentifier():  # a stand-in for an argument of a function run on unknown arguments
                return self._arguments(src, node, f"`{text}`", [])
            # the function's result: its call was not followed
            label = getattr(node, "name", "<lambda>")
            budget = self.cut.get(label)
            if budget is not None:
                return BUDGET, f"`{label}()` was not followed: {self._budget_reason(budget)}", budget, None
            return UNRESOLVED, f"what `{label}()` gives could not be followed", "", None
        if node is None:
            return UNRESOLVED, f"`{text}` is computed in code the engine did not see", "", None
        if receiver_of_call and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        return self.why_expr(src, node, span.line, [])

    def why_expr(self, src: _Source, expr: ast.AST, line: int, hops: list) -> Why:
        root, call = _root(expr)
        said = src.sf.segment(expr) or "?"
        if len(said) > 60:
            said = said[:57] + "..."
        if root is None:
            return UNRESOLVED, _chain(hops, f"`{said}` could not be followed"), "", None
        name = root.id
        fn = src.function_at(line)
        # an argument of the function holding it
        if fn is not None and name in _arguments(fn):
            if _first_is_self(fn, name):
                return UNRESOLVED, _chain(hops, f"`{said}` could not be followed"), "", None
            if self.entry == "script":
                cause = f"`{name}` is an argument of `{fn.name}`, given a value the engine could not follow"
                return UNRESOLVED, _chain(hops, cause), "", None
            return self._arguments(src, fn, f"`{name}`", hops)
        # a name bound before: follow its value (a module's name, from inside a function: anywhere)
        bound = src.binding(fn, name, line) or (src.binding(None, name, 1 << 30) if fn is not None else None)
        if isinstance(bound, _Import):
            return self._imported(src, bound, said, hops)
        if isinstance(bound, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return self._not_followed(src, bound, said, hops)
        if bound is not None and len(hops) < _MAX_HOPS:
            value, at = bound
            hop = (name, src.sf.segment(value), at)
            if hop not in hops:
                return self.why_expr(src, value, at, hops + [hop])
        return UNRESOLVED, _chain(hops, f"`{said}` could not be followed"), "", None

    def _imported(self, src: _Source, imp: _Import, said: str, hops: list) -> Why:
        top = imp.module.split(".")[0] if imp.module else ""
        if imp.level == 0 and top and top in self.missing:
            where = f" ({self.env})" if self.env else ""
            cause = f"`{said}` comes from `{imp.module}`, which is not installed in the environment read{where}"
            return LIBRARY, _chain(hops, cause), "", None
        name = imp.name or imp.module.rsplit(".", 1)[-1]
        budget = self.cut.get(name)
        if budget is not None and (imp.level or top not in self.found):
            return BUDGET, _chain(hops, f"`{said}` was not followed: {self._budget_reason(budget)}"), budget, None
        what = f"`{imp.module}`" if imp.module else "the package"
        return UNRESOLVED, _chain(hops, f"`{said}` (from {what}) gives a value the engine could not follow"), "", None

    def _not_followed(
        self, src: _Source, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, said: str, hops: list
    ) -> Why:
        """A call of a function or class of this file that gave an unknown value: a budget cut it,
        or what it returns is unknown in turn."""
        is_class = isinstance(node, ast.ClassDef)
        budget = self.cut.get(node.name) or (self.cut.get("forward") if is_class else None)
        if budget is not None:
            return BUDGET, _chain(hops, f"`{said}` was not followed: {self._budget_reason(budget)}"), budget, None
        if not is_class and len(hops) < _MAX_HOPS:
            returned = [n.value for n in _statements(node.body) if isinstance(n, ast.Return) and n.value is not None]
            if returned:
                value = returned[-1]
                hop = (f"{node.name}()", f"returns {src.sf.segment(value)}", value.lineno)
                if hop not in hops:
                    return self.why_expr(src, value, value.lineno, hops + [hop])
        return UNRESOLVED, _chain(hops, f"`{said}` gives a value the engine could not follow"), "", None

    def _budget_reason(self, budget: str) -> str:
        return self.gaps.reason(budget) if self.gaps is not None else "a budget ran out"

    def _arguments(self, src: _Source, fn: ast.AST, name: str, hops: list) -> Why:
        """An argument of a function run on unknown arguments: a budget, when one cut its call."""
        label = getattr(fn, "name", "<lambda>")
        budget = self.cut.get(label)
        if budget is not None:
            cause = (
                f"{name} is an argument of `{label}`, whose call was not followed ({self._budget_reason(budget)}): "
                "it ran on unknown arguments instead"
            )
            return BUDGET, _chain(hops, cause), budget, None
        callers = src.callers_of(label)
        tail = f" (called from `{callers[0]}`, which the engine did not run)" if callers else ""
        cause = (
            f"{name} is an argument of `{label}`, which ran on unknown arguments: nothing the engine followed "
            f"calls it{tail}"
        )
        return ARGUMENTS, _chain(hops, cause), "", None

    # ------------------------------------------------------------ steps never reached

    def missed(self) -> tuple:
        if self.gaps is None:
            return ()
        have = {(s.span.path, s.span.line, s.span.col) for s in self.model.steps}
        out, seen = [], set()
        for sf, stmts, budget in self.gaps.not_reached():
            src = self.source(sf.path) or _Source(sf)
            for stmt in stmts:
                for node in _walk_stmt(stmt):
                    loss = _backward_call(sf, node)
                    if loss is None:
                        continue
                    span = src.span(node)
                    key = (span.path, span.line, span.col)
                    if key in have or key in seen:
                        continue
                    seen.add(key)
                    reason = Reason(
                        STEP,
                        BUDGET,
                        f"{self._budget_reason(budget)} before it",
                        span,
                        budget,
                    )
                    out.append(MissedStep(span, src.qualname(span.line), loss, (reason,)))
        out.sort(key=lambda m: (m.span.path, m.span.line, m.span.col))
        return tuple(out)


def _unique(reasons: list) -> list:
    out, seen = [], set()
    for r in reasons:
        key = (r.what, r.why, r.detail)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _chain(hops: list, cause: str) -> str:
    """'`optimizer` is `make_optimizer(model)` (line 6), and `make_optimizer` comes from ...'"""
    if not hops:
        return cause
    said = ", ".join(
        f"`{name}` {_short(value)} (line {line})"
        if value.startswith("returns ")
        else f"`{name}` is `{_short(value)}` (line {line})"
        for name, value, line in hops
    )
    return f"{said}; {cause}"


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _root(expr: ast.AST) -> tuple[ast.Name | None, bool]:
    """(the leftmost name of `a.b(c)[d].e`, whether a call was on the way)."""
    call = False
    while True:
        if isinstance(expr, ast.Call):
            call = True
            expr = expr.func
        elif isinstance(expr, (ast.Attribute, ast.Subscript, ast.Starred, ast.Await)):
            expr = expr.value
        elif isinstance(expr, ast.Name):
            return expr, call
        else:
            return None, call


def _arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set:
    a = fn.args
    names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    if a.vararg:
        names.add(a.vararg.arg)
    if a.kwarg:
        names.add(a.kwarg.arg)
    return names


def _first_is_self(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, name: str) -> bool:
    args = fn.args.posonlyargs + fn.args.args
    return bool(args) and args[0].arg == name and name in ("self", "cls")


def _walk_stmt(stmt: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a statement, nested function bodies excluded (they run only when called)."""
    work = [stmt]
    while work:
        node = work.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                work.append(child)


def _backward_call(sf: SourceFile, node: ast.AST) -> str | None:
    """The loss text of a `loss.backward()`, `fabric.backward(loss)`, `torch.autograd.grad(loss, ...)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    f = node.func
    if f.attr in ("backward", "manual_backward"):
        if node.args and (f.attr == "manual_backward" or not isinstance(f.value, (ast.Name, ast.Attribute))):
            return sf.segment(node.args[0])
        if node.args and _looks_like_framework(sf.segment(f.value)):
            return sf.segment(node.args[0])
        return sf.segment(f.value)
    if f.attr == "grad" and sf.segment(f.value).endswith("autograd") and node.args:
        return sf.segment(node.args[0])
    return None


def _looks_like_framework(receiver: str) -> bool:
    low = receiver.rsplit(".", 1)[-1].lower()
    return any(w in low for w in ("fabric", "accelerator", "engine", "trainer", "scaler"))


@dataclass(frozen=True)
class _Import:
    module: str  # the module imported from ('' for `from . import x`)
    name: str  # the name imported from it ('' for `import module`)
    level: int


class _Source:
    """What coverage reads of one file's tree: positions, functions, bindings of names."""

    def __init__(self, sf: SourceFile) -> None:
        self.sf = sf
        self._functions: list | None = None
        # expressions and statements by where they start, in `ast.walk` order: `node_at` is asked
        # once per unknown value of a step, and walking a large file each time dominated the check
        self._starts: dict | None = None
        self._calls: list | None = None

    def span(self, node: Any) -> Span:
        sf = self.sf
        line = node.lineno
        end = getattr(node, "end_lineno", line) or line
        return Span(
            sf.path,
            line,
            sf.char_col(line, node.col_offset),
            end,
            sf.char_col(end, getattr(node, "end_col_offset", 0) or 0),
        )

    def functions(self) -> list:
        """(qualified name, node) of every function, outermost first."""
        if self._functions is None:
            out: list = []

            def walk(nodes: list, prefix: str) -> None:
                for n in nodes:
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        out.append((prefix + n.name, n))
                        walk(n.body, prefix + n.name + ".")
                    elif isinstance(n, ast.ClassDef):
                        walk(n.body, prefix + n.name + ".")
                    else:
                        for name in ("body", "orelse", "finalbody", "handlers"):
                            block = getattr(n, name, None)
                            if isinstance(block, list):
                                walk(block, prefix)

            walk(self.sf.tree.body, "")
            self._functions = out
        return self._functions

    def function_at(self, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        best = None
        for _, fn in self.functions():
            if fn.lineno <= line <= (fn.end_lineno or fn.lineno):
                if best is None or fn.lineno >= best.lineno:
                    best = fn
        return best

    def qualname(self, line: int) -> str:
        best, size = "<module>", None
        for name, fn in self.functions():
            if fn.lineno <= line <= (fn.end_lineno or fn.lineno):
                n = (fn.end_lineno or fn.lineno) - fn.lineno
                if size is None or n <= size:
                    best, size = name, n
        return best

    def function_span(self, line: int) -> Span | None:
        fn = self.function_at(line)
        if fn is None:
            return Span(self.sf.path, 1, 0, len(self.sf.lines), 0)
        return self.span(fn)

    def _index(self) -> dict:
        if self._starts is None:
            starts: dict = {}
            calls: list = []
            for node in ast.walk(self.sf.tree):
                if isinstance(node, (ast.expr, ast.stmt)):
                    starts.setdefault((node.lineno, self.sf.char_col(node.lineno, node.col_offset)), []).append(node)
                    if isinstance(node, ast.Call):
                        calls.append(node)
            self._starts, self._calls = starts, calls
        return self._starts

    def calls_in(self, first: int, last: int) -> Iterator[ast.Call]:
        self._index()
        for node in self._calls or ():
            if first <= node.lineno <= last:
                yield node

    def node_at(self, span: Span) -> ast.AST | None:
        """The call, function or expression starting at `span` (the widest one there)."""
        best = None
        for node in self._index().get((span.line, span.col), ()):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
            if isinstance(node, ast.stmt):
                continue
            end_line = node.end_lineno or node.lineno
            end = (end_line, self.sf.char_col(end_line, node.end_col_offset or 0))
            if (end == (span.end_line, span.end_col)) or best is None:
                best = node
        return best

    def binding(self, fn: ast.FunctionDef | ast.AsyncFunctionDef | None, name: str, line: int) -> Any:
        """What `name` is bound to before `line` in `fn`'s body (the module's when None): an _Import,
        a def or class node, or (value expression, its line); None when nothing binds it there."""
        body = fn.body if fn is not None else self.sf.tree.body
        found = None
        for stmt in _statements(body):
            if stmt.lineno > line:
                break
            got = _binds(stmt, name)
            if got is not None:
                found = got
        return found

    def callers_of(self, name: str) -> list:
        out = []
        for qual, fn in self.functions():
            if fn.name == name:
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                    out.append(qual)
                    break
        return out


def _statements(body: list) -> Iterator[ast.stmt]:
    """The statements of a block in order, into compound statements, not into nested defs."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if isinstance(block, list):
                yield from _statements(block)
        for h in getattr(stmt, "handlers", ()) or ():
            yield from _statements(h.body)


def _binds(stmt: ast.stmt, name: str) -> Any:
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            if _target_has(t, name):
                return (stmt.value, stmt.lineno)
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
        if _target_has(stmt.target, name):
            return (stmt.value, stmt.lineno)
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            if item.optional_vars is not None and _target_has(item.optional_vars, name):
                return (item.context_expr, stmt.lineno)
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        if _target_has(stmt.target, name):
            return (stmt.iter, stmt.lineno)
    elif isinstance(stmt, ast.Import):
        for a in stmt.names:
            if (a.asname or a.name.split(".")[0]) == name:
                return _Import(a.name if a.asname else a.name.split(".")[0], "", 0)
    elif isinstance(stmt, ast.ImportFrom):
        for a in stmt.names:
            if (a.asname or a.name) == name:
                return _Import(stmt.module or "", a.name, stmt.level)
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == name:
        return stmt
    return None


def _target_has(t: ast.AST, name: str) -> bool:
    if isinstance(t, ast.Name):
        return t.id == name
    if isinstance(t, (ast.Tuple, ast.List)):
        return any(_target_has(e, name) for e in t.elts)
    if isinstance(t, ast.Starred):
        return _target_has(t.value, name)
    return False


# ------------------------------------------------------------------ what was understood, per step


@dataclass(frozen=True)
class StepCoverage:
    """One training step as every output reports its coverage (picklable: it crosses processes)."""

    span: Span  # the backward() call
    function: str
    loss: str
    entry: str  # 'script' (reached running the file), 'function' (run on unknown arguments), 'missed'
    reasons: tuple = ()  # Reason: empty when understood
    models: tuple = ()  # (root module, parameters named in it, the library model's type or '')
    optimizers: tuple = ()  # (name, type, groups) of the optimizers stepped for the loss
    loop: int = 0  # the line of the loop around it (0: none)
    loss_line: int = 0

    @property
    def understood(self) -> bool:
        return not self.reasons

    def parts(self) -> list[str]:
        """What was understood, in words: '`model` (4 parameters)', '`optimizer` (SGD, 1 group)', ..."""
        out = []
        for name, n, kind in self.models:
            if kind and not n:
                out.append(f"model `{name}` (`{kind}`, its parameters held as one)")
            else:
                out.append(f"model `{name}` ({n} parameter{'s' if n != 1 else ''}" + (f", `{kind}`)" if kind else ")"))
        for name, kind, groups in self.optimizers:
            out.append(f"optimizer `{name}` ({kind}, {groups} group{'s' if groups != 1 else ''})")
        if self.loss:
            out.append(f"loss `{_short(self.loss)}`" + (f" (line {self.loss_line})" if self.loss_line else ""))
        if self.loop:
            out.append(f"loop at line {self.loop}")
        return out


def records(model: ProgramModel | None) -> list[StepCoverage]:
    """One StepCoverage per backward() call site of the model, the ones never reached included."""
    if model is None:
        return []
    # a call site run several times (a loop's two passes, a helper called twice) is understood when
    # one run of it was: that run was analysed in full
    by: dict = {}
    for s in model.steps:
        key = (s.span.path, s.span.line, s.span.col)
        if key not in by or (s.understood and not by[key].understood):
            by[key] = s
    out = [step_record(s, model.libraries) for s in by.values()]
    for m in model.missed:
        out.append(StepCoverage(m.span, m.function, m.loss, "missed", m.reasons))
    return out


def step_record(s: Step, libraries: tuple = ()) -> StepCoverage:
    """`libraries`: the model's LibraryModules (a library model's parameters are held as one stand-in)."""
    models: dict = {}  # root module -> [parameters named, library type]
    kinds = {lib.path: lib.type for lib in libraries}
    cut = {p for c in s.cuts for p in c.removed | c.removed_weak}
    for p in s.reached | s.reached_weak | cut:
        root = p.module.split(".")[0] if p.module else p.name.split(".")[0]
        if not p.opaque:
            models.setdefault(root, [0, ""])[0] += 1
        elif root in kinds:
            models.setdefault(root, [0, ""])[1] = kinds[root]
    opts = tuple(
        (o.name, o.type, len(o.groups)) for o in sorted(s.optimizers, key=lambda o: o.seq) if o.key in s.stepped
    )
    return StepCoverage(
        s.span,
        s.function,
        s.loss,
        s.entry,
        s.not_understood,
        tuple((name, n, kind) for name, (n, kind) in sorted(models.items())),
        opts,
        s.loop.line if s.loop is not None else 0,
        s.loss_span.line if s.loss_span is not None and s.loss_span.path == s.span.path else 0,
    )


_RANK = {"script": 0, "function": 1, "missed": 2}


def merge(recs: Iterable[StepCoverage]) -> list[StepCoverage]:
    """One record per backward() over the analyses of several files: an understanding wins over
    none, a run as a script over a run on unknown arguments over a step never reached; a step not
    understood anywhere keeps the reasons each analysis gave."""
    by: dict = {}
    for r in recs:
        # a file reached through an import is named as the importing analysis read it: one place
        by.setdefault((os.path.normcase(os.path.abspath(r.span.path)), r.span.line, r.span.col), []).append(r)
    out = []
    for group in by.values():
        group.sort(key=lambda r: (not r.understood, _RANK.get(r.entry, 3)))
        best = group[0]
        # the path as the analysis of the file itself names it (the one given, or found walking a folder)
        own = next((r.span for r in group if r.entry != "missed"), best.span)
        best = replace(best, span=own)
        if not best.understood:
            # a step the file running it never reached (a budget) first: the run on unknown
            # arguments another file's analysis made of it is the fallback
            reasons: list = []
            for other in sorted(group, key=lambda r: r.entry != "missed"):
                for reason in other.reasons:
                    if all((x.why, x.detail) != (reason.why, reason.detail) for x in reasons):
                        reasons.append(reason)
            best = replace(best, reasons=tuple(reasons))
        out.append(best)
    out.sort(key=lambda r: (r.span.path, r.span.line, r.span.col))
    return out


def headline(recs: Sequence[StepCoverage]) -> str:
    """'3 of 4 training steps understood' ('No training step found' when there is none)."""
    total = len(recs)
    if not total:
        return "No training step (`backward()`) found"
    n = sum(1 for r in recs if r.understood)
    return f"{n} of {total} training step{'s' if total != 1 else ''} understood"

"""The audit's content as data: analysis of the paths, then the five sections from the
training-step model and the findings. The Markdown, JSON and HTML writers only format this.
"""

from __future__ import annotations

import ast
import difflib
import re

from ..check.budgets import setting
from ..check.notebook_fixes import cell_diff, fix_notebook
from ..model import coverage as C
from ..model.findings import Finding
from ..model.model import EventKind, ProgramModel, Step
from ..rules.common import describe, optimizer_of
from ..rules.fixes import apply_edits
from ..source.notebook import IDENTITY, Locator
from ..source.prebuilt import dataclass, field, replace
from ..source.program import split_lines
from . import gradflow
from . import graph as G
from .judge import classify, rank_key, severity, why_not_lookalike
from .runtime import RuntimeCheck, runtime_check
from .summary import unique_steps

NO_DEFECT = (
    "autograd is wired correctly for what was checked: every loss reaches the parameters its "
    "optimizer steps, nothing on the way cuts them off, and the optimizer lifecycle runs in order"
)


class Source:
    """A file's text with lazily parsed tree: what the report reads of a SourceFile."""

    def __init__(self, path: str, text: str, tree=None):
        self.path, self.source, self._tree = path, text, tree
        self._lines: list[str] | None = None

    @property
    def lines(self):
        if self._lines is None:
            self._lines = split_lines(self.source)
        return self._lines

    def line_text(self, n: int) -> str:
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""

    @property
    def tree(self):
        if self._tree is None:
            try:
                self._tree = ast.parse(self.source)
            except (SyntaxError, ValueError):
                self._tree = ast.Module(body=[], type_ignores=[])
        return self._tree


@dataclass(frozen=True)
class Excerpt:
    label: str
    path: str
    line: int
    lines: tuple  # (line number, text)


@dataclass(frozen=True)
class Entry:
    finding: Finding
    severity: str
    classification: str
    function: str
    evidence: tuple  # Excerpt
    why: str
    correction: int | None = None  # index into Audit.corrections
    runtime: RuntimeCheck | None = None  # the probe check that shows it at runtime, or why none does
    step: str = ""  # StepGraph id of the training step it concerns ('' when none is known)


@dataclass(frozen=True)
class Correction:
    index: int
    code: str
    path: str
    line: int
    message: str
    applicability: str  # safe | unsafe
    diff: str
    parses: bool


@dataclass(frozen=True)
class Check:
    step: str  # StepGraph id
    plan: gradflow.ProbePlan
    test: str  # the test function gradaudit probe --emit writes for it
    assumptions: tuple
    findings: tuple = ()  # ranks (1-based) of the findings on this step


@dataclass(frozen=True)
class LookAlike:
    kind: str
    path: str
    line: int
    code: str  # the source line
    judgement: str


@dataclass(frozen=True)
class Audit:
    paths: tuple
    files_checked: int
    graphs: tuple  # StepGraph
    entries: tuple  # Entry, ranked
    corrections: tuple
    checks: tuple
    lookalikes: tuple
    problems: tuple = ()  # problems.Problem: what could not be read, parsed, analysed or completed
    texts: dict = field(default_factory=dict, compare=False)  # path -> Source
    # notebooks' lines are those of their code cells as one source: the writers name the cell
    locator: Locator = field(default=IDENTITY, compare=False)
    libraries: tuple = ()  # imported.LibraryUse: whose installed libraries were read, what was missing
    # coverage.StepCoverage of every training step found (graphed or never reached), understood or not
    coverage: tuple = ()

    def where(self, path: str, line: int, col: int | None = None) -> str:
        """`train.py:12` (`:5` with a 0-based col), `lesson.ipynb:cell 4:2` in a notebook."""
        w = self.locator.at(path, line, col or 0)
        cell = f"cell {w.cell.number}:" if w.cell is not None else ""
        return f"{path}:{cell}{w.line}" + (f":{w.col + 1}" if col is not None else "")

    def cell_of(self, path: str, line: int) -> dict:
        """{"cell": {"index", "id"}, "cell_line"} for a notebook's line (JSON), else {}."""
        w = self.locator.at(path, line, 0)
        return {} if w.cell is None else {"cell": w.cell_json(), "cell_line": w.line}

    @property
    def clean(self) -> bool:
        return not self.entries

    @property
    def errors(self) -> tuple:
        return tuple(p for p in self.problems if p.is_error)

    @property
    def incomplete(self) -> tuple:
        """Analyses a budget cut short: what they did not reach is not in this report."""
        return tuple(p for p in self.problems if not p.is_error)

    @property
    def understood(self) -> bool:
        """Every training step found was understood (none never reached, none on unknown values)."""
        return all(r.understood for r in self.coverage)

    @property
    def no_defect(self) -> str | None:
        """The no-defect statement, when it can be made: only when every training step was
        understood; it says what a budget left unchecked."""
        if not (self.clean and self.graphs and self.understood):
            return None
        return NO_DEFECT + (f" ({cut_short(self)})" if self.incomplete else "")

    @property
    def partial(self) -> str | None:
        """No finding, but some steps not understood: what the verdict covers (Markdown)."""
        if not self.clean or self.understood:
            return None
        n = sum(1 for r in self.coverage if r.understood)
        missing = len(self.coverage) - n
        if not n:
            return (
                f"No training step was understood ({missing} found; section 1 says why): no verdict is made on "
                f"{'them' if missing != 1 else 'it'}"
            )
        return (
            f"No defect was found in the {n} training step{'s' if n != 1 else ''} understood; "
            f"{missing} {'were' if missing != 1 else 'was'} not understood (section 1 says why), and no verdict "
            f"is made on {'them' if missing != 1 else 'it'}"
        )

    @property
    def missed(self) -> tuple:
        """The steps found but never reached (no graph: nothing of them was run)."""
        graphed = {(g.path, g.line) for g in self.graphs}
        return tuple(r for r in self.coverage if r.entry == "missed" and (r.span.path, r.span.line) not in graphed)

    @property
    def no_step(self) -> str:
        """Why section 1 has no graph (Markdown)."""
        if self.missed:
            n = len(self.missed)
            flags = sorted({s.flag for r in self.missed for x in r.reasons if (s := setting(x.budget)) is not None})
            raise_it = " or ".join(f"`{f}`" for f in flags) or "that budget"
            return (
                f"No training step was reached: {n} `backward()` call{'s were' if n != 1 else ' was'} found in code "
                f"a budget kept the analysis from reaching (below); raise {raise_it} to audit "
                f"{'them' if n != 1 else 'it'}."
            )
        if self.incomplete:
            return (
                f"No `backward()` was found in what was analysed ({cut_short(self)}): raise that budget to audit "
                "the rest."
            )
        return "No `backward()` was found under the paths given: there is no training step to audit."


def cut_short(a: Audit) -> str:
    n = len(a.incomplete)
    return (
        f"the analysis of {n} file{'s were' if n != 1 else ' was'} cut short by a budget; "
        f"what {'they' if n != 1 else 'it'} did not reach was not checked"
    )


# ------------------------------------------------------------------ analysis


def keep_for_report(path, r):
    """What the report needs of one analysis: its findings, its model when it has a training step,
    and the texts of the files it read when there is something to show from them."""
    texts = {p: sf.source for p, sf in r.files.items()} if r.model.steps or r.findings else {}
    return path, r.findings, r.model if r.model.steps or r.model.missed else None, texts


def analyze(paths, config, jobs=0, time_budget=None, python=None, cache=True):
    """The files under `paths` analysed as `gradaudit check` analyses them (runner.py)."""
    from ..check.runner import analyze_paths

    return analyze_paths(paths, config, jobs, False, time_budget, python, cache, keep=keep_for_report)


# ------------------------------------------------------------------ the sections


def build(paths, files_checked, results, problems=(), notebooks=None, libraries=(), coverage=None) -> Audit:
    """`coverage`: the merged coverage.StepCoverage of the run (runner.py); by default, of `results`' models."""
    from ..check.engine import _resolve_overlaps

    if coverage is None:
        coverage = C.merge([r for _, _, m, _ in results for r in C.records(m)])
    covered = {(r.span.path, r.span.line, r.span.col): r for r in coverage}

    texts: dict = {}
    for _, _, _, t in results:
        for p, text in t.items():
            texts.setdefault(p, Source(p, text))
    findings = sorted(_resolve_overlaps([f for _, fs, _, _ in results for f in fs]), key=rank_key)
    # each backward() once, from the analysis that ran the file as a script when there is one
    steps: dict = {}
    for entry, _, model, _ in results:
        if model is None:
            continue
        for s in unique_steps(model):
            key = (s.span.path, s.span.line, s.span.col)
            prev = steps.get(key)
            if prev is None or (prev[2].entry != "script" and s.entry == "script"):
                steps[key] = (entry, model, s)
    ordered = sorted(steps.values(), key=lambda x: (x[2].span.path, x[2].span.line))
    graphs, checks, looks = [], [], []
    # places where some step's gradient is cut: never "logging", whichever step's loop they sit in
    cut_places = {(c.span.path, c.span.line) for _, _, s in ordered for c in s.cuts}
    flagged = {(f.span.path, f.span.line) for f in findings}
    for i, (entry, model, step) in enumerate(ordered, 1):
        cov = covered.get((step.span.path, step.span.line, step.span.col)) or C.step_record(step, model.libraries)
        g = G.step_graph(f"s{i}", model, step, texts, flagged, cov)
        graphs.append(g)
        plan = gradflow.plan_step(model, step, entry, texts)
        if notebooks and step.span.path in notebooks:
            [plan] = gradflow.located([plan], Locator(notebooks), step.span.path)
        test = "\n".join(gradflow.test_source(plan)) if plan.locatable else ""
        checks.append(Check(g.id, plan, test, tuple(assumptions(g))))
        looks += lookalikes(model, step, findings, texts, cut_places)
    for model in {id(m): m for _, m, _ in ordered}.values():
        looks += loss_lookalikes(model, findings, texts)
    seen: set[tuple] = set()
    uniq = []
    for la in looks:
        place = (la.kind, la.path, la.line)
        if place not in seen:
            seen.add(place)
            uniq.append(la)
    entries: list = []
    corrections: list = []
    step_of: dict = {}
    for _, _model, s in ordered:
        step_of.setdefault(s.span.path, []).append(s)
    for f in findings:
        corr = correction(f, len(corrections), texts, notebooks)
        if corr is not None:
            corrections.append(corr)
        opt = _optimizer_near(f, step_of)
        entries.append(
            Entry(
                f,
                severity(f),
                classify(f),
                function_at(texts.get(f.span.path), f.span.line),
                tuple(evidence(f, texts)),
                why_not_lookalike(f, opt),
                corr.index if corr is not None else None,
                runtime_check(f),
                _step_of(f, graphs),
            )
        )
    checks = [replace(c, findings=tuple(i for i, e in enumerate(entries, 1) if e.step == c.step)) for c in checks]
    return Audit(
        tuple(paths),
        files_checked,
        tuple(graphs),
        tuple(entries),
        tuple(corrections),
        tuple(checks),
        tuple(uniq),
        tuple(problems),
        texts,
        Locator(notebooks),
        tuple(libraries),
        tuple(coverage),
    )


def _step_of(f: Finding, graphs) -> str:
    """The step a finding concerns: of the steps in its file, the one whose backward() is nearest."""
    near = [g for g in graphs if g.path == f.span.path]
    if not near:
        return ""
    return min(near, key=lambda g: (abs(g.line - f.span.line), g.line)).id


def _optimizer_near(f, step_of) -> str:
    for s in step_of.get(f.span.path, ()):
        o = optimizer_of(s)
        if o is not None:
            return o.name
    return ""


def function_at(src: Source | None, line: int) -> str:
    """The qualified name of the innermost function (or class) around `line`; '<module>' at top level."""
    if src is None:
        return ""
    best, best_len = "<module>", None

    def walk(nodes, prefix):
        nonlocal best, best_len
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.lineno <= line <= (
                node.end_lineno or node.lineno
            ):
                name = f"{prefix}{node.name}"
                size = (node.end_lineno or node.lineno) - node.lineno
                if best_len is None or size <= best_len:
                    best, best_len = name, size
                walk(node.body, name + ".")
            elif hasattr(node, "body") and isinstance(node.body, list):
                walk(node.body, prefix)
                walk(getattr(node, "orelse", []) or [], prefix)

    walk(src.tree.body, "")
    return best


def _excerpt(label, texts, span, context=0) -> Excerpt | None:
    src = texts.get(span.path)
    if src is None:
        return None
    first, last = max(1, span.line - context), min(len(src.lines), span.end_line)
    last = min(last, first + 4)
    return Excerpt(label, span.path, span.line, tuple((n, src.line_text(n).rstrip()) for n in range(first, last + 1)))


def evidence(f: Finding, texts) -> list[Excerpt]:
    out = []
    anchor = _excerpt(f"{f.code}: {f.name}", texts, f.span)
    if anchor is not None:
        out.append(anchor)
    for r in f.related:
        e = _excerpt(r.message, texts, r.span)
        if e is not None and not any(x.path == e.path and x.line == e.line for x in out):
            out.append(e)
    return out


def correction(f: Finding, index: int, texts, notebooks=None) -> Correction | None:
    """The finding's own fix as a unified diff, if its edits stay in one file and the result parses
    (in a notebook: in one cell, diffed as that cell's source)."""
    if f.fix is None or not f.fix.edits:
        return None
    paths = {e.span.path for e in f.fix.edits}
    if len(paths) != 1:
        return None
    path = paths.pop()
    nb = (notebooks or {}).get(path)
    if nb is not None:
        fixed = fix_notebook(nb, None, [f], only_safe=False)
        diff = "".join(cell_diff(path, c) for c in fixed.changes)
        return Correction(
            index, f.code, f.span.path, f.span.line, f.fix.message, f.fix.applicability, diff, bool(fixed.applied)
        )
    src = texts.get(path)
    if src is None:
        return None
    new = apply_edits(src.source, f.fix.edits)
    try:
        ast.parse(new)
        parses = True
    except SyntaxError:
        parses = False
    diff = (
        "".join(
            difflib.unified_diff(
                src.source.splitlines(True), new.splitlines(True), fromfile=f"a/{path}", tofile=f"b/{path}"
            )
        )
        if parses
        else ""
    )
    return Correction(index, f.code, f.span.path, f.span.line, f.fix.message, f.fix.applicability, diff, parses)


# ------------------------------------------------------------------ verification


def assumptions(g: G.StepGraph) -> list[str]:
    """Gradient assumptions of this step that deserve a test (true as far as the engine saw)."""
    out = []
    for m in g.modules:
        if m.optimized and not m.frozen:
            out.append(
                f"`{m.name}` trains from step 0: gets gradient from `{g.loss}` and changes at the first "
                f"`{m.optimized[0]}.step()`"
            )
            if not m.partly_frozen:
                out.append(f"no parameter of `{m.name}` is frozen")
        elif m.frozen and not m.optimized:
            out.append(f"`{m.name}` stays frozen and out of the optimizer")
        elif m.note == "copy" or (m.held_elsewhere and not m.reached):
            out.append(f"`{m.name}` gets no gradient from `{g.loss}`")
    for o in g.optimizers:
        if o.stepped and any(e.kind == EventKind.ZERO_GRAD and e.target == o.name for e in g.events):
            out.append(f"`{o.name}` clears gradients between steps")
    out.append(f"`{g.loss}` stays finite")
    return out


def observed(a: Audit, c: Check) -> list[str]:
    """What the step's probe shows of the findings on this step, by finding (Markdown inline)."""
    out = []
    for rank in c.findings:
        e = a.entries[rank - 1]
        rc = e.runtime
        if rc is None:
            continue
        tail = "" if rc.check is None or c.plan.locatable else " (no probe was written for this step)"
        out.append(f"#{rank} {e.finding.code}: {rc.observes}{tail}")
    return out


# ------------------------------------------------------------------ valid look-alikes

_LOGGING = re.compile(r"\.(item|tolist|detach|cpu|numpy)\(\)")


def lookalikes(model: ProgramModel, step: Step, findings, texts, cut_places=frozenset()) -> list[LookAlike]:
    """What the engine saw on this step's way and judged valid, from the training-step model."""
    out = []
    flagged = {(f.span.path, f.span.line) for f in findings}
    stepped = [o for o in step.optimizers if o.key in step.stepped]
    src = texts.get(step.span.path)

    def line_of(span):
        s = texts.get(span.path)
        return s.line_text(span.line).strip() if s is not None else ""

    for c in step.cuts:
        if (c.span.path, c.span.line) in flagged:
            continue
        judged = G.stop_gradient(model, step, c)
        if judged is not None:
            kind, why = judged
            out.append(LookAlike(kind, c.span.path, c.span.line, line_of(c.span), why))
    # frozen parameters next to an optimizer that leaves them out (or filters on requires_grad)
    frozen_groups: dict = {}
    for p in step.frozen:
        frozen_groups.setdefault(G.group_of(p.module), set()).add(p)
    for name, ps in sorted(frozen_groups.items()):
        holders = [o for o in step.optimizers if o.params & ps]
        if any(g.filtered for o in stepped for g in o.groups) or not holders:
            fz = next((f for f in model.freezes if f.params & ps and not f.value), None)
            where = fz.span if fz is not None else next(iter(ps)).span
            if where is None or (where.path, where.line) in flagged:
                continue
            how = (
                "built from the parameters that still require grad"
                if any(g.filtered for o in stepped for g in o.groups)
                else "not given them"
            )
            out.append(
                LookAlike(
                    "frozen backbone",
                    where.path,
                    where.line,
                    line_of(where),
                    f"`{name}` is frozen and the optimizer is {how}",
                )
            )
    # manual updates inside torch.no_grad()
    for u in model.leaf_updates:
        if u.nograd and (u.span.path, u.span.line) not in flagged:
            out.append(
                LookAlike(
                    "manual update under no_grad",
                    u.span.path,
                    u.span.line,
                    line_of(u.span),
                    f"{describe(u.params)} change by hand inside `torch.no_grad()`",
                )
            )
    # values leaving the graph in the step's loop without feeding the loss: logging and metrics
    if src is not None and step.loop is not None:
        cut_lines = {(c.span.path, c.span.line) for c in step.cuts} | set(cut_places)
        for n in range(step.loop.line, step.loop.end_line + 1):
            text = src.line_text(n)
            code = text.split("#", 1)[0]
            m = _LOGGING.search(code)
            if m and (step.span.path, n) not in cut_lines and (step.span.path, n) not in flagged:
                out.append(
                    LookAlike(
                        "logging",
                        step.span.path,
                        n,
                        text.strip(),
                        f"`.{m.group(1)}()` here does not feed `{step.loss}`: logging or metrics",
                    )
                )
    return out


def loss_lookalikes(model: ProgramModel, findings, texts) -> list[LookAlike]:
    """Losses computed and never backpropagated whose parameters train anyway: logged, metric and
    validation losses (GA209 leaves them alone)."""
    out = []
    flagged = {(f.span.path, f.span.line) for f in findings}
    trained: set = set()
    for s in model.steps:
        trained |= s.reached | s.reached_weak
    for term in getattr(model, "losses", ()):
        if term.backpropagated or (term.span.path, term.span.line) in flagged:
            continue
        src = texts.get(term.span.path)
        code = src.line_text(term.span.line).strip() if src is not None else ""
        if not term.params:
            why = f"{term.label} carries no gradient (evaluation or no_grad): nothing to backpropagate"
        elif term.params <= trained:
            why = (
                f"{term.label} reaches no backward(), but {describe(term.params)} get gradient from the loss "
                "that is backpropagated: a logged or metric loss"
            )
        else:
            continue
        out.append(LookAlike("loss not backpropagated", term.span.path, term.span.line, code, why))
    return out

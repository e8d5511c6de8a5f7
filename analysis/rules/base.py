"""The rule framework: a rule is data (code, name, docs, examples, severity, the look-alike it is
not, the runtime check that shows it, the rules it supersedes) plus a check function. Everything
the engine, the report and the probes say about a rule is read from its RULE."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from ..model.findings import CONFIRMED, Edit, Finding, Fix, Related
from ..model.model import ProgramModel, Span
from ..source.prebuilt import dataclass, field
from ..source.program import SourceFile

GRAPH_BREAK, LIFECYCLE, BACKWARD, NUMERICAL = "graph-break", "lifecycle", "backward", "numerical"
DOCS_URL = "https://gradaudit.dev/rules/{code}"

# What the defect does to training, independent of how sure the engine is: `critical` torch
# raises (the step cannot run), `high` parameters never train or values go non-finite, `medium`
# training runs with wrong or stale gradients, `low` it costs memory or reads a gradient that is
# not there.
SEVERITIES = ("critical", "high", "medium", "low")

# The probe's checks (as named in the JSON report) and the kinds of problem each reports (the
# `[kind]` that starts each line of a failing probe's message).
PROBLEMS: dict[str, tuple[str, ...]] = {
    "into": ("no-gradient", "zero-gradient", "frozen"),
    "updates": ("never-changes", "frozen-group", "no-step"),
    "finite": ("nonfinite-loss", "nonfinite-gradient", "nonfinite-parameter"),
    "cleared": ("stale", "cross-talk", "clip"),
    "bounded": ("growing-graph",),
    "raises": ("error",),
    "warns": ("warning",),
    "same-objects": ("rebuilt",),
}
CHECKS = tuple(PROBLEMS)

_NONFINITE = (
    "`finite` fails when a batch reaches the hazard ({hazard}) — the probe's batches may not, "
    "so a passing probe does not clear this finding"
)


@dataclass(frozen=True)
class RuntimeCheck:
    """Which assertion of the runtime probe fails when the defect happens for real, or why none does
    (a loss scale that may be meant, memory growth, a loss that learns slowly but stays finite)."""

    check: str | None  # one of CHECKS; None: no runtime check observes this defect
    observes: str  # what fails at runtime, or why nothing does
    data_dependent: bool = False  # fails only on batches that reach the hazard

    @property
    def problems(self) -> tuple[str, ...]:
        return PROBLEMS.get(self.check, ()) if self.check is not None else ()

    @classmethod
    def nonfinite(cls, hazard: str) -> RuntimeCheck:
        """A numerical hazard: `finite` fails on the batches that reach it."""
        return cls("finite", _NONFINITE.format(hazard=hazard), True)


@dataclass(frozen=True)
class Example:
    """A complete script. `# <- GAxxx` marks the anchor line of an expected finding (the marker
    is stripped before analysis); `fixed` is the exact source after the rule's fix, if any.
    `runtime` states what real torch does with it: 'error: <substring>', 'no-update: <name>'
    (that module or tensor never changes), or 'trains' (every leaf that reaches a loss changes);
    `fixed_runtime` the same for the fixed source."""

    source: str
    fixed: str | None = None
    runtime: str | None = None
    note: str = ""
    fixed_runtime: str = "trains"  # what the fixed source does (a partial fix may still fail)


@dataclass(frozen=True, kw_only=True)
class Rule:
    code: str
    name: str
    family: str
    summary: str
    what: str
    why: str
    example: str
    use_instead: str
    check: Callable[[RuleContext], Iterable[Finding]]
    severity: str  # one of SEVERITIES
    # why a finding is not one of the valid patterns the rule leaves alone: the look-alike and the
    # fact of the training-step model that rules it out (`{opt}`: the optimizer's name)
    lookalike: str
    runtime: RuntimeCheck
    supersedes: tuple[str, ...] = ()  # codes this more specific rule wins over on the same defect
    # the kinds of premise its findings rest on (rules/premises.py); empty: its family's
    premises: tuple[str, ...] = ()
    invalid: tuple[Example, ...] = ()
    valid: tuple[Example, ...] = ()
    fix_available: bool = True

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"{self.code}: severity {self.severity!r} is not one of {SEVERITIES}")

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def finding(
        self,
        span: Span,
        message: str,
        *,
        confidence: str = CONFIRMED,
        params: Iterable[str] = (),
        related: Iterable[Related] = (),
        fix: Fix | None = None,
        data: dict[str, Any] | None = None,
    ) -> Finding:
        """A finding of this rule at `span`. `data`: facts for the report and the editor, outside the
        JSON contract."""
        return Finding(
            self.code,
            self.name,
            self.family,
            confidence,
            span,
            message,
            tuple(params),
            tuple(related),
            fix,
            data=data if data is not None else {},
        )

    def documentation(self) -> str:
        return "\n".join(
            [
                f"{self.code} {self.name} ({self.family})",
                "",
                "## What it does",
                self.what.strip(),
                "",
                "## Why is this bad?",
                self.why.strip(),
                "",
                "## Example",
                "```python",
                self.example.strip("\n"),
                "```",
                "",
                "## Use instead",
                "```python",
                self.use_instead.strip("\n"),
                "```",
            ]
        )


@dataclass
class RuleContext:
    """What a rule sees: the model, the files behind it, and helpers to phrase findings."""

    model: ProgramModel
    files: dict[str, SourceFile]  # by path
    findings: list[Finding] = field(default_factory=list)
    # what several rules derive from the model, computed once (each entry's type is its reader's)
    cache: dict[str, Any] = field(default_factory=dict)

    def text(self, span: Span | None) -> str:
        if span is None:
            return ""
        sf = self.files.get(span.path)
        if sf is None:
            return ""
        if span.line == span.end_line:
            return sf.line_text(span.line)[span.col : span.end_col]
        lines = [sf.line_text(span.line)[span.col :]]
        lines += [sf.line_text(n) for n in range(span.line + 1, span.end_line)]
        lines.append(sf.line_text(span.end_line)[: span.end_col])
        return "\n".join(lines)

    def node_span(self, path: str, node: ast.expr | ast.stmt) -> Span | None:
        """The span of an ast node of one of the files (character columns)."""
        sf = self.files.get(path)
        if sf is None:
            return None
        end_line = node.end_lineno or node.lineno  # a parsed node has its end
        return Span(
            path,
            node.lineno,
            sf.char_col(node.lineno, node.col_offset),
            end_line,
            sf.char_col(end_line, node.end_col_offset or 0),
        )

    def text_of_node(self, path: str, node: ast.AST) -> str:
        sf = self.files.get(path)
        return sf.segment(node) if sf is not None else ""

    def line(self, path: str, n: int) -> str:
        sf = self.files.get(path)
        return sf.line_text(n) if sf is not None else ""

    def tree(self, path: str) -> ast.Module | None:
        sf = self.files.get(path)
        return sf.tree if sf is not None else None

    def alias(self, path: str, module: str) -> str:
        """How `module` (e.g. 'torch.nn') is spelled in a file: 'nn', 'torch.nn', ..."""
        tree = self.tree(path)
        if tree is None:
            return module
        head, _, last = module.rpartition(".")
        best = None
        for node in tree.body:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == module:
                        return a.asname or module
                    if module.startswith(a.name + ".") and a.asname is None and best is None:
                        best = module
            elif isinstance(node, ast.ImportFrom) and node.module == head and not node.level:
                for a in node.names:
                    if a.name == last:
                        return a.asname or last
        return best or module

    def statement_lines(self, span: Span) -> tuple[int, int] | None:
        """The span's lines when it covers whole statements (nothing else on those lines)."""
        first = self.line(span.path, span.line)
        last = self.line(span.path, span.end_line)
        if first[: span.col].strip() or _code_after(last, span.end_col):
            return None
        return span.line, span.end_line

    def delete_lines(self, path: str, first: int, last: int) -> Edit:
        return Edit(Span(path, first, 0, last + 1, 0), "")

    def replace(self, span: Span, content: str) -> Edit:
        return Edit(span, content)

    def indent_unit(self, path: str) -> str:
        """The file's indentation step: a tab, or the smallest run of leading spaces."""
        sf = self.files.get(path)
        best = None
        for text in sf.lines if sf is not None else ():
            stripped = text.lstrip()
            if not stripped or stripped.startswith("#") or len(stripped) == len(text):
                continue
            lead = text[: len(text) - len(stripped)]
            if lead.startswith("\t"):
                return "\t"
            if best is None or len(lead) < len(best):
                best = lead
        return best or "    "

    def indent_of(self, path: str, line: int) -> str:
        text = self.line(path, line)
        return text[: len(text) - len(text.lstrip())]


def _code_after(line: str, col: int) -> bool:
    rest = line[col:].strip()
    return bool(rest) and not rest.startswith("#")


def related(span: Span | None, message: str) -> tuple[Related, ...]:
    return (Related(span, message),) if span is not None else ()

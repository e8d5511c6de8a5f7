"""Engine findings and spans as LSP objects. Engine columns are code points; clients count in
their negotiated position encoding (UTF-16 by default), converted here, at the edge."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Sequence
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace import PositionCodec

import gradaudit.analysis
from gradaudit.analysis.model.findings import Edit, Finding
from gradaudit.analysis.source.program import split_lines
from gradaudit.analysis.source.span import Span

from .settings import Settings

# docs/ sits beside the analysis package in every layout: the repository (analysis/, docs/) and an
# installed gradaudit (gradaudit/analysis/, gradaudit/docs/)
_DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(gradaudit.analysis.__file__))), "docs")

_NUMERICAL = "numerical"
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return os.path.normpath(unquote(parsed.path)) if parsed.scheme == "file" else uri


def uri_of(path: str) -> str:
    return from_fs_path(os.path.abspath(path)) or path


class Positions:
    """Converts engine spans of one file to client ranges, given that file's lines."""

    def __init__(self, lines: Sequence[str], codec: PositionCodec) -> None:
        self.lines = lines
        self.codec = codec

    def position(self, line: int, col: int) -> types.Position:
        """Engine (1-based line, code-point column) -> client position."""
        n = line - 1
        text = self.lines[n] if 0 <= n < len(self.lines) else ""
        return types.Position(line=max(n, 0), character=self.codec.client_num_units(text[:col]))

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.line, span.col), end=self.position(span.end_line, span.end_col))


def line_diff(old: str, new: str) -> list[types.TextEdit]:
    """Edits turning `old` into `new`, whole lines replaced (what a fix-all sends)."""
    a, b = split_lines(old, keepends=True), split_lines(new, keepends=True)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        start = types.Position(line=i1, character=0)
        end = types.Position(line=i2, character=0)
        edits.append(types.TextEdit(range=types.Range(start=start, end=end), new_text="".join(b[j1:j2])))
    return edits


def severity_for(finding: Finding, severity: dict[str, str]) -> types.DiagnosticSeverity:
    """The user's severity for a finding (code or name, the longest matching prefix, family and
    confidence, family, confidence), else by confidence and family."""
    if severity:
        prefixes = sorted(
            (k for k in severity if k.startswith("GA") and finding.code.startswith(k)), key=len, reverse=True
        )
        for key in (
            finding.code,
            finding.name,
            *prefixes,
            f"{finding.family}.{finding.confidence}",
            finding.family,
            finding.confidence,
        ):
            if key in severity:
                return _SEVERITY[severity[key]]
    if finding.confidence == "confirmed":
        return types.DiagnosticSeverity.Warning if finding.family == _NUMERICAL else types.DiagnosticSeverity.Error
    return types.DiagnosticSeverity.Information if finding.family == _NUMERICAL else types.DiagnosticSeverity.Warning


def docs_href(code: str, settings: Settings) -> str | None:
    """The rule's page: the user's `docsUrl`, else the page shipped inside the installed package
    (docs/rules/GAnnn.md; nothing is written anywhere)."""
    if settings.docs_url:
        return settings.docs_url.format(code=code)
    path = rule_page(code)
    return uri_of(path) if path is not None else None


def rule_page(code: str) -> str | None:
    """docs/rules/<code>.md beside the gradaudit package: the repository's docs/ for a clone or an
    editable install, gradaudit/docs/ in a wheel or the extension's bundle."""
    path = os.path.join(_DOCS, "rules", f"{code}.md")
    return path if os.path.isfile(path) else None


def diagnostic(
    finding: Finding,
    positions: Positions,
    settings: Settings,
    positions_for: Callable[[str], Positions | None],
    severity: dict[str, str] | None = None,
) -> types.Diagnostic:
    """`severity`: the merged project and client severities (the client's alone when None)."""
    href = docs_href(finding.code, settings)
    related = []
    for r in finding.related:
        pos = positions if r.span.path == finding.span.path else positions_for(r.span.path)
        if pos is None:
            continue
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri_of(r.span.path), range=pos.range(r.span)), message=r.message
            )
        )
    return types.Diagnostic(
        range=positions.range(finding.span),
        message=finding.message
        + (
            f" [{', '.join(finding.params[:6])}{', …' if len(finding.params) > 6 else ''}]"
            if finding.params and len(finding.params) <= 12
            else ""
        ),
        severity=severity_for(finding, settings.severity if severity is None else severity),
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source="gradaudit",
        related_information=related or None,
        tags=None,
        data={"confidence": finding.confidence, "name": finding.name, "key": finding_key(finding)},
    )


def finding_key(f: Finding) -> str:
    s = f.span
    return f"{f.code}:{s.line}:{s.col}:{s.end_line}:{s.end_col}"


def text_edits(edits: Iterable[Edit], positions: Positions) -> list[types.TextEdit]:
    return [types.TextEdit(range=positions.range(e.span), new_text=e.content) for e in edits]

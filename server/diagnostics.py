"""What a document's diagnostics are after an analysis, and where they move while it is edited.

Besides findings, an analysis can say: some statements do not parse (one diagnostic at each,
those statements are not analysed), a budget cut it short ("analysis incomplete: ..."), a training
step was not understood (an information diagnostic on its `backward()`, saying why), or it could
not run at all. The findings of the previous analysis that the new one could not recompute
(in statements that do not parse yet, or all of them when nothing could be analysed) stay, at
their places moved with the edits, instead of flickering off until the code parses again.
"""

from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.workspace import PositionCodec

from gradaudit.analysis.check.engine import Result
from gradaudit.analysis.output.coverage import step_message
from gradaudit.analysis.source.program import ParseError

from .convert import Positions
from .documents import Analysis

FINDING, PARSE, INCOMPLETE, COVERAGE = "finding", "parse", "incomplete", "coverage"
_BREAK = re.compile(r"\r\n|\r|\n")


def kind_of(d: types.Diagnostic) -> str:
    data = d.data if isinstance(d.data, dict) else {}
    kind: str = data.get("kind", FINDING)  # the server's own data (below, convert.diagnostic)
    return kind


def _line_range(positions: Positions, line: int, col: int) -> types.Range:
    """From (1-based line, 1-based column) to the end of that line."""
    n = max(line - 1, 0)
    text = positions.lines[n] if n < len(positions.lines) else ""
    text = text.rstrip("\r\n")
    start = positions.position(n + 1, min(max(col - 1, 0), len(text)))
    end = positions.position(n + 1, len(text))
    if (end.line, end.character) <= (start.line, start.character):
        end = types.Position(line=start.line, character=start.character + 1)
    return types.Range(start=start, end=end)


def parse_diagnostic(error: ParseError, positions: Positions) -> types.Diagnostic:
    what = "could not read" if getattr(error, "kind", "parse") == "read" else "could not parse"
    tail = " (this statement is not analysed until it parses)" if getattr(error, "region", None) else ""
    return types.Diagnostic(
        range=_line_range(positions, error.line, error.col),
        message=f"{what}: {error.msg}{tail}",
        severity=types.DiagnosticSeverity.Error,
        source="gradaudit",
        code="parse-error",
        data={"kind": PARSE},
    )


def incomplete_diagnostic(message: str, positions: Positions, line: int = 1, col: int = 1) -> types.Diagnostic:
    return types.Diagnostic(
        range=_line_range(positions, line, col),
        message=message,
        severity=types.DiagnosticSeverity.Information,
        source="gradaudit",
        code="incomplete",
        data={"kind": INCOMPLETE},
    )


def coverage_diagnostics(result: Result, path: str, positions: Positions) -> list[types.Diagnostic]:
    """An information diagnostic on each training step of the document at `path` that was not
    understood: no finding there is not a verdict (output/coverage.py words it)."""
    out = []
    for rec in result.coverage:
        if rec.understood or os.path.normpath(os.path.abspath(rec.span.path)) != path:
            continue
        out.append(
            types.Diagnostic(
                range=positions.range(rec.span),
                message=step_message(rec, editor=True),
                severity=types.DiagnosticSeverity.Information,
                source="gradaudit",
                code="not-understood",
                data={"kind": COVERAGE},
            )
        )
    return out


def stopped_message(analysis: Analysis) -> str:
    """The message for an analysis the server stopped (or that failed)."""
    if analysis.stopped == "time":
        return (
            f"analysis incomplete: the analysis took longer than {analysis.budget} and was stopped "
            f"(the whole document not reached)"
        )
    if analysis.stopped == "memory":
        return (
            f"analysis incomplete: the analysis needed more than the memory budget of {analysis.budget} "
            f"(the whole document not reached)"
        )
    if analysis.stopped == "died":
        return "analysis incomplete: the analysis process stopped unexpectedly (the whole document not reached)"
    if analysis.stopped == "unavailable":
        return "analysis unavailable: the analysis process cannot start; see the server's log"
    return "analysis incomplete: internal error (the whole document not reached); see the server's log"


def carried(previous: list[types.Diagnostic], result: Result | None) -> list[types.Diagnostic]:
    """The findings of the previous analysis that `result` could not recompute: all of them when
    nothing was analysed, else those inside the statements left out because they do not parse."""
    old = [d for d in previous if kind_of(d) == FINDING]
    if result is None or result.error is not None:
        return old
    regions = [e.region for e in result.broken if e.region is not None]
    if not regions:
        return []
    return [d for d in old if any(first <= d.range.start.line + 1 <= last for first, last in regions)]


# ------------------------------------------------------------ moving with the edits


def _units(codec: PositionCodec, text: str) -> int:
    units: int = codec.client_num_units(text)  # pygls leaves it unannotated
    return units


def move(
    diagnostics: list[types.Diagnostic], change: types.TextDocumentContentChangeEvent, codec: PositionCodec
) -> list[types.Diagnostic]:
    """The diagnostics' ranges after one content change (client units). A full-text change cannot
    be followed: the ranges stay."""
    r = getattr(change, "range", None)
    if r is None:
        return diagnostics
    text = change.text
    breaks = list(_BREAK.finditer(text))
    tail = text[breaks[-1].end() :] if breaks else text
    new_end_line = r.start.line + len(breaks)
    new_end_char = (0 if breaks else r.start.character) + _units(codec, tail)
    start, end = (r.start.line, r.start.character), (r.end.line, r.end.character)

    def pos(p: types.Position, is_start: bool) -> types.Position:
        here = (p.line, p.character)
        # text typed exactly where a range starts goes before it; where it ends, after it
        if here < start or (here == start and not (is_start and start == end)):
            return p
        if here < end:
            return types.Position(line=new_end_line, character=new_end_char)  # inside what was replaced
        if p.line == r.end.line:
            return types.Position(line=new_end_line, character=new_end_char + p.character - r.end.character)
        return types.Position(line=p.line + new_end_line - r.end.line, character=p.character)

    out = []
    for d in diagnostics:
        a, b = pos(d.range.start, True), pos(d.range.end, False)
        if (b.line, b.character) < (a.line, a.character):
            b = a
        if (a.line, a.character) == (d.range.start.line, d.range.start.character) and (b.line, b.character) == (
            d.range.end.line,
            d.range.end.character,
        ):
            out.append(d)
            continue
        moved = types.Diagnostic(
            range=types.Range(start=a, end=b),
            message=d.message,
            severity=d.severity,
            code=d.code,
            code_description=d.code_description,
            source=d.source,
            tags=d.tags,
            related_information=d.related_information,
            data=d.data,
        )
        out.append(moved)
    return out

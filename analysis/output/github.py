"""GitHub Actions workflow commands: one ::error / ::warning annotation per finding."""

from __future__ import annotations

from ..source.notebook import IDENTITY, Locator
from .coverage import headline, step_message


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _json_line(cell, line: int) -> int:
    """The line of the .ipynb file that holds line `line` of the cell."""
    lines = cell.json_lines
    return lines[min(max(line, 1), len(lines)) - 1] if lines else 1


def render(findings, errors, files_checked: int, locator: Locator = IDENTITY, libraries=(), coverage=(), **_) -> str:
    out = []
    for f in findings:
        level = "error" if f.confidence == "confirmed" else "warning"
        w = locator.span(f.span)
        message = f"{f.code} [{f.confidence}] {f.message}"
        if w.cell is not None:
            # GitHub annotates lines of the file: the .ipynb's own line holding the cell's line;
            # the message says where in the cell
            lines = f"line={_json_line(w.cell, w.line)},endLine={_json_line(w.cell, w.end_line)}"
            props = f"file={_escape_prop(w.path)},{lines}"
            props += f",title={_escape_prop(f'{f.code} {f.name} (cell {w.cell.number}, line {w.line})')}"
            message = f"cell {w.cell.number}:{w.line}:{w.col + 1}: {message}"
        else:
            props = (
                f"file={_escape_prop(w.path)},line={w.line},col={w.col + 1},endLine={w.end_line},"
                f"endColumn={w.end_col + 1},title={_escape_prop(f'{f.code} {f.name}')}"
            )
        out.append(f"::{level} {props}::{_escape_data(message)}")
    for e in errors:
        level = "error" if e.is_error else "warning"
        where = f"file={_escape_prop(e.path)}" + (f",line={e.line},col={e.col}" if e.line else "")
        text = ("could not parse: " + e.message) if e.kind == "parse" else e.message
        if e.cell is not None and e.line:
            where = f"file={_escape_prop(e.path)},line={_json_line(e.cell, e.line)}"
            text = f"cell {e.cell.number}:{e.line}:{e.col}: {text}"
        out.append(f"::{level} {where},title=gradaudit::{_escape_data(text)}")
    # a training step not understood got no verdict: a notice on it, and how many were
    for r in coverage:
        if not r.understood:
            w = locator.span(r.span)
            line = _json_line(w.cell, w.line) if w.cell is not None else w.line
            out.append(
                f"::notice file={_escape_prop(w.path)},line={line},title=gradaudit::{_escape_data(step_message(r))}"
            )
    if coverage and not all(r.understood for r in coverage):
        out.append(f"::notice title=gradaudit::{_escape_data(headline(coverage) + '.')}")
    for u in libraries:
        if u.lacking:  # a library not found is known from gradaudit's table only: worth a notice
            out.append(f"::notice title=gradaudit::{_escape_data(u.sentence())}")
    return "\n".join(out) + ("\n" if out else "")

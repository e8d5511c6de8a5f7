"""GitHub Actions workflow commands: one ::error / ::warning annotation per finding."""

from __future__ import annotations


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(findings, errors, files_checked: int, **_) -> str:
    out = []
    for f in findings:
        level = "error" if f.confidence == "confirmed" else "warning"
        s = f.span
        props = (
            f"file={_escape_prop(s.path)},line={s.line},col={s.col + 1},endLine={s.end_line},"
            f"endColumn={s.end_col + 1},title={_escape_prop(f'{f.code} {f.name}')}"
        )
        out.append(f"::{level} {props}::{_escape_data(f'{f.code} [{f.confidence}] {f.message}')}")
    for e in errors:
        level = "error" if e.is_error else "warning"
        where = f"file={_escape_prop(e.path)}" + (f",line={e.line},col={e.col}" if e.line else "")
        text = ("could not parse: " + e.message) if e.kind == "parse" else e.message
        out.append(f"::{level} {where},title=gradaudit::{_escape_data(text)}")
    return "\n".join(out) + ("\n" if out else "")

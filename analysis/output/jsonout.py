"""The JSON contract of rules.md, {"version": 1, "findings": [...]}, plus what could not be done:
"errors" (files that do not parse or could not be read, internal errors, fixes not written),
"incomplete" (analyses a budget cut short), each {"kind", "path", "line", "column", "message"},
"environments" (whose installed libraries were read, and the imported ones not found there), and
"coverage" (how many training steps were found and understood; each step, and why one was not).
In a notebook, positions are the cell's and each carries "cell": {"index", "id"}."""

from __future__ import annotations

import json

from ..source.notebook import IDENTITY, Locator
from .coverage import coverage_json


def finding_json(f, locator: Locator = IDENTITY) -> dict:
    """Finding.to_json with positions as the user sees them: in a notebook, the lines and columns
    of the finding, its related locations and its fix edits are the cell's, and each carries
    `"cell": {"index": 0-based position among the notebook's cells, "id": nbformat cell id}`."""
    out = f.to_json()
    if locator.notebook(f.span.path) is None:
        return out
    w = locator.span(f.span)
    out.update(line=w.line, column=w.col + 1, end_line=w.end_line, end_column=w.end_col + 1)
    out = _after_path(out, w)
    for r, rj in zip(f.related, out["related"]):
        rw = locator.span(r.span)
        rj.update(line=rw.line, column=rw.col + 1)
        if rw.cell is not None:
            rj["cell"] = rw.cell_json()
    if f.fix is not None:
        for e, ej in zip(f.fix.edits, out["fix"]["edits"]):
            ew = locator.span(e.span)
            ej.update(line=ew.line, column=ew.col + 1, end_line=ew.end_line, end_column=ew.end_col + 1)
            if ew.cell is not None:
                ej["cell"] = ew.cell_json()
    return out


def _after_path(out: dict, w) -> dict:
    """The finding's JSON with "cell" right after "path": where it is, read in order."""
    ordered = {}
    for k, v in out.items():
        ordered[k] = v
        if k == "path":
            ordered["cell"] = w.cell_json()
    return ordered


def render(findings, errors, files_checked: int, locator: Locator = IDENTITY, libraries=(), coverage=(), **_) -> str:
    return (
        json.dumps(
            {
                "version": 1,
                "findings": [finding_json(f, locator) for f in findings],
                "errors": [p.to_json() for p in errors if p.is_error],
                "incomplete": [p.to_json() for p in errors if not p.is_error],
                "environments": [u.to_json() for u in libraries],
                "coverage": coverage_json(coverage, locator),
            },
            indent=2,
        )
        + "\n"
    )

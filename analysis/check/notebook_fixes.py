"""Fixes in a notebook: the edits, made in the virtual source (notebook.py), applied to the cells
they fall in and written back into the .ipynb text, every other byte left as it was."""

from __future__ import annotations

import difflib

from ..rules.fixes import apply_edits, fix_source
from ..source.notebook import Notebook, build, write_back
from ..source.prebuilt import dataclass


@dataclass(frozen=True)
class CellChange:
    index: int  # the cell's position among all the notebook's cells
    before: str
    after: str


@dataclass(frozen=True)
class NotebookFix:
    text: str | None  # the .ipynb text with the fixes (None when no text was given)
    applied: tuple  # the findings fixed
    changes: tuple  # CellChange per changed cell


class _CellEdit:
    __slots__ = ("content", "span")

    def __init__(self, span, content):
        self.span, self.content = span, content


class _Span:
    __slots__ = ("col", "end_col", "end_line", "line")

    def __init__(self, line, col, end_line, end_col):
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col


def fix_notebook(nb: Notebook, text: str | None, findings, only_safe=True) -> NotebookFix:
    """Apply the fixes of `findings` (virtual positions) to the notebook's file text (None: only
    the cells' changes are wanted). A fix whose edits leave its cell, or whose result does not
    parse, is not applied."""
    candidates = []
    for f in findings:
        if f.fix is None or not f.fix.edits or (only_safe and f.fix.applicability != "safe"):
            continue
        touched = {_cell_of(nb, e.span) for e in f.fix.edits}
        if len(touched) == 1 and None not in touched:
            candidates.append(f)
    _, applied = fix_source(nb.source, candidates, only_safe)
    by_cell: dict = {}
    for f in applied:
        for e in f.fix.edits if f.fix is not None else ():
            start = nb.place(e.span.line, e.span.col)
            if start is None:
                continue  # in no code cell: such a fix was not a candidate
            end = nb.end_place(e.span.end_line, e.span.end_col, start)
            by_cell.setdefault(start.cell.index, []).append(
                _CellEdit(_Span(start.line, start.col, end.line, end.col), e.content)
            )
    cells = {c.index: c for c in nb.cells}
    changes = []
    for index, edits in sorted(by_cell.items()):
        before = cells[index].source
        after = apply_edits(before, edits)
        if after != before:
            changes.append(CellChange(index, before, after))
    if not changes:
        return NotebookFix(text, (), ())
    new_cells = []
    changed = {c.index: c.after for c in changes}
    for c in nb.cells:
        new_cells.append(c if c.index not in changed else type(c)(c.index, c.id, c.kind, changed[c.index]))
    # the cells as written must read back as the source the fixes were checked on
    again = build(nb.path, new_cells, nb.language)
    if again.problems and len(again.problems) > len(nb.problems):
        return NotebookFix(text, (), ())
    return NotebookFix(write_back(text, changed) if text is not None else None, tuple(applied), tuple(changes))


def cell_diff(path: str, change: CellChange) -> str:
    """A unified diff of one cell's source, headed `a/lesson.ipynb:cell 7`."""
    where = f"{path}:cell {change.index + 1}"
    return "".join(
        difflib.unified_diff(
            _lines_for_diff(change.before), _lines_for_diff(change.after), fromfile=f"a/{where}", tofile=f"b/{where}"
        )
    )


def _lines_for_diff(text: str) -> list[str]:
    lines = text.splitlines(True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of cell\n"
    return lines


def _cell_of(nb: Notebook, span):
    start = nb.place(span.line, span.col)
    if start is None:
        return None
    end = nb.place(span.end_line, span.end_col)
    if end is not None and end.cell.index != start.cell.index:
        # a whole-line edit ends at column 0 of the next cell's first line: still this cell
        if not (span.end_col == 0 and end.line == 1):
            return None
    return start.cell.index

"""What a check could not do, as data: every output format reports it, none drops it.

kinds:  parse      a file (or some statements of it) does not parse: exit 1, like a finding
        read       a file or folder could not be read                 exit 2
        missing    a path given on the command line does not exist    exit 2
        internal   the engine failed on a file                        exit 2
        write      a fix or the report could not be written           exit 2
        incomplete a budget cut the analysis of a file short          (a warning; no exit status)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..source.notebook import Cell, Locator
from ..source.prebuilt import dataclass, replace
from .budgets import advice

EXIT_2_KINDS = ("read", "missing", "internal", "write")


@dataclass(frozen=True)
class Problem:
    kind: str
    path: str
    message: str
    line: int = 0  # 0: the file as a whole
    col: int = 0  # 1-based; 0 with line 0
    not_reached: int = 0  # incomplete: statements not reached
    detail: str = ""  # internal: the traceback
    cell: Cell | None = None  # in a notebook: the cell, `line` and `col` being the cell's

    def located(self, locator: Locator) -> Problem:
        """This problem with a notebook's virtual position mapped to its cell (Locator)."""
        if self.cell is not None or not self.line or locator.notebook(self.path) is None:
            return self
        w = locator.at(self.path, self.line, max(self.col - 1, 0))
        return replace(self, line=w.line, col=w.col + 1, cell=w.cell)

    @property
    def is_error(self) -> bool:
        return self.kind != "incomplete"

    def where(self) -> str:
        cell = f"cell {self.cell.number}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.col}" if self.line else self.path

    def line_text(self) -> str:
        """The one line on stderr."""
        if self.kind == "incomplete":
            return f"{self.where()}: warning: {self.message}"
        if self.kind == "parse":
            return f"{self.where()}: error: could not parse: {self.message}"
        if self.kind == "missing":
            return f"gradaudit: {self.path}: {self.message}"
        return f"{self.where()}: error: {self.message}"

    def to_json(self) -> dict:
        out: dict[str, object] = {
            "kind": self.kind,
            "path": self.path,
            "line": self.line or None,
            "column": self.col or None,
            "message": self.message,
        }
        if self.cell is not None:
            out["cell"] = {"index": self.cell.index, "id": self.cell.id or None}
        if self.kind == "incomplete":
            out["not_reached"] = self.not_reached
        return out

    # ------------------------------------------------------------ from the engine's records

    @staticmethod
    def from_parse_error(e: Any) -> Problem:
        kind = getattr(e, "kind", "parse")
        if kind == "read":
            return Problem("read", e.path, e.msg)
        return Problem("parse", e.path, e.msg, e.line, max(1, e.col))

    @staticmethod
    def from_gap(path: str, gap: Any) -> Problem:
        line, col = (gap.first.line, gap.first.col + 1) if gap.first is not None else (0, 0)
        where = gap.first.path if gap.first is not None else path
        msg = gap.message()
        if gap.first is not None and gap.first.path != path:
            msg += f", first at {gap.first.path}:{gap.first.line}"
            where, line, col = path, 0, 0
        tip = advice(gap)  # the flag that raises the budget that ran out
        if tip:
            msg += f"; {tip}"
        # `not_reached` counts statements; calls not followed or modules not loaded are in the message
        return Problem("incomplete", where, msg, line, col, gap.count if gap.unit == "statement" else 0)

    @staticmethod
    def internal(path: str, summary: str, detail: str = "") -> Problem:
        return Problem("internal", path, f"internal error: {summary}", detail=detail)


def problems_of(result: Any) -> list[Problem]:
    """The problems of one engine Result (parse errors, including recovered ones; a cut-short analysis)."""
    out = [Problem.from_parse_error(e) for e in result.problems]
    if result.gap is not None:
        out.append(Problem.from_gap(result.path, result.gap))
    return out


def exit_error(problems: Iterable[Problem]) -> bool:
    return any(p.kind in EXIT_2_KINDS for p in problems)

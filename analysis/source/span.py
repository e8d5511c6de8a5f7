"""A range of source text: where a finding, an event or a parameter is.

Lines are 1-based; columns are 0-based character offsets.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    path: str
    line: int
    col: int
    end_line: int
    end_col: int

    def contains(self, other: Span) -> bool:
        return (
            self.path == other.path
            and (self.line, self.col) <= (other.line, other.col)
            and (other.end_line, other.end_col) <= (self.end_line, self.end_col)
        )

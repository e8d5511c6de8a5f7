"""A range of source text: where a finding, an event or a parameter is.

Lines are 1-based; columns are 0-based character offsets.
"""

from __future__ import annotations

from .prebuilt import dataclass


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

    def at(self, here: str = "") -> str:
        """'line 284' when shown for the file `here`, 'model.py:284' otherwise: a location named
        next to another file's carries its own file."""
        return at(self.path, self.line, here)


def at(path: str, line: int, here: str = "") -> str:
    """'line 284' in the file `here`, else 'model.py:284'."""
    return f"line {line}" if not path or path == here else f"{path}:{line}"

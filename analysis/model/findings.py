"""Findings: what a rule reports, with the evidence and the smallest fix."""

from __future__ import annotations

from typing import Any

from ..interp.trace import CONFIRMED, SUSPICIOUS
from ..source.prebuilt import dataclass, field
from ..source.span import Span

__all__ = ["CONFIRMED", "SUSPICIOUS"]
SAFE, UNSAFE = "safe", "unsafe"


@dataclass(frozen=True, slots=True)
class Related:
    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text of `span` with `content` (an empty span inserts)."""

    span: Span
    content: str


@dataclass(frozen=True, slots=True)
class Fix:
    message: str
    applicability: str  # 'safe' fixes are applied by --fix; 'unsafe' ones only shown
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True, slots=True)
class Premise:
    """A fact a finding rests on, established from the code the engine read. When it leans on code the
    engine could not see (`unseen`: that code, called at `span`), it does not hold as proven and the
    finding is not confirmed (model/premises.py)."""

    text: str
    holds: bool = True
    unseen: str = ""  # what could not be seen: `model.get_classifier()`
    span: Span | None = None  # where that code is called
    # a call the analysis did not follow because its budget ran out was given these objects: the
    # engine knows it did not look, so the finding is not reported at all (the output says the
    # analysis is incomplete and which budget to raise)
    cut: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"premise": self.text, "holds": self.holds}
        if self.unseen:
            out["unseen"] = self.unseen
        if self.span is not None:
            out["path"], out["line"], out["column"] = self.span.path, self.span.line, self.span.col + 1
        return out


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    family: str
    confidence: str
    span: Span
    message: str
    params: tuple[str, ...] = ()  # names of the parameters concerned
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    premises: tuple[Premise, ...] = ()  # the facts it rests on (model/premises.py)
    # extra facts for consumers (the audit report, the language server); not part of the JSON contract
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def path(self) -> str:
        return self.span.path

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.path, self.span.line, self.span.col, self.code)

    def to_json(self) -> dict[str, Any]:
        s = self.span
        return {
            "code": self.code,
            "name": self.name,
            "family": self.family,
            "confidence": self.confidence,
            "path": s.path,
            "line": s.line,
            "column": s.col + 1,
            "end_line": s.end_line,
            "end_column": s.end_col + 1,
            "message": self.message,
            "params": list(self.params),
            "related": [
                {"path": r.span.path, "line": r.span.line, "column": r.span.col + 1, "message": r.message}
                for r in self.related
            ],
            "fix": None
            if self.fix is None
            else {
                "message": self.fix.message,
                "applicability": self.fix.applicability,
                "edits": [
                    {
                        "line": e.span.line,
                        "column": e.span.col + 1,
                        "end_line": e.span.end_line,
                        "end_column": e.span.end_col + 1,
                        "content": e.content,
                    }
                    for e in self.fix.edits
                ],
            },
            "premises": [p.to_json() for p in self.premises],
        }

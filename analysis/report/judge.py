"""How the audit ranks and explains a finding: severity, class, and why it is no valid look-alike.

Severity and the look-alike sentence are fields of each rule (rules/gaNNN_*.py); a confirmed
finding whose message says torch raises is critical whatever its rule says.
"""

from __future__ import annotations

from ..rules import BY_CODE
from ..rules.base import SEVERITIES

__all__ = ["CLASSES", "SEVERITIES", "classify", "rank_key", "severity", "why_not_lookalike"]

CLASSES = (
    "confirmed graph break",
    "confirmed lifecycle defect",
    "confirmed numerical instability",
    "suspicious but unproven",
)


def severity(f) -> str:
    if "raises" in f.message and f.confidence == "confirmed":
        return "critical"
    rule = BY_CODE.get(f.code)
    return rule.severity if rule is not None else "medium"


def classify(f) -> str:
    if f.confidence != "confirmed":
        return CLASSES[3]
    if f.family == "graph-break":
        return CLASSES[0]
    if f.family == "numerical":
        return CLASSES[2]
    return CLASSES[1]  # lifecycle, and backward semantics (the order and reuse of backward passes)


def rank_key(f):
    return (
        SEVERITIES.index(severity(f)),
        0 if f.confidence == "confirmed" else 1,
        f.span.path,
        f.span.line,
        f.span.col,
        f.code,
    )


def why_not_lookalike(f, opt_name: str = "") -> str:
    rule = BY_CODE.get(f.code)
    if rule is None:
        return f"The conditions of {f.code} held on the training-step model: {f.name}."
    return rule.lookalike.format(opt=f"`{opt_name}`" if opt_name else "the optimizer")

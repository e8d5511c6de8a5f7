"""When two findings report one defect: one finding per code and anchor, and the more specific
rule's finding stays where two rules report the same line (each rule's `supersedes`).

Apart from the engine so that a check whose every file comes from the result cache
(result_cache.py) resolves the overlaps between files without loading the engine and the rules:
the cache keeps the rules' `supersedes` with the results.
"""

from __future__ import annotations

from ..model.findings import CONFIRMED, Finding
from ..source.prebuilt import replace


def rule_supersedes() -> dict:
    """code -> the codes it wins over on the same line, from the rules."""
    from ..rules import RULES

    return {r.code: r.supersedes for r in RULES if r.supersedes}


def resolve_overlaps(found: list[Finding], supersedes: dict) -> list[Finding]:
    # one finding per (code, anchor): keep confirmed over suspicious, merge parameters
    by_key: dict = {}
    for f in found:
        key = (f.code, f.span.path, f.span.line, f.span.col)
        prev = by_key.get(key)
        if prev is None:
            by_key[key] = f
        else:
            # confirmed first; then what a training step reached over what a forward run alone shows
            # (a module checked on its own, and its driver's analysis: runner.py)
            best = min(prev, f, key=lambda x: (x.confidence != CONFIRMED, "unit" in x.data))
            params = tuple(sorted(set(prev.params) | set(f.params)))
            by_key[key] = replace(best, params=params)
    found = list(by_key.values())
    lines: dict = {}
    for f in found:
        lines.setdefault((f.span.path, f.span.line), set()).add(f.code)
    out = []
    for f in found:
        codes = lines[(f.span.path, f.span.line)]
        if any(f.code in supersedes.get(c, ()) for c in codes if c != f.code):
            continue
        out.append(f)
    return out

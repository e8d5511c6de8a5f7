"""Suppression comments on an anchor line: `# gradaudit: ignore[GA101]`, `# noqa: GA101`."""

from __future__ import annotations

import re

_GRADAUDIT = re.compile(r"#\s*gradaudit:\s*ignore(?![\w-])(?:\[([^\]]*)\])?", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa(?![\w-])(?::\s*([A-Za-z0-9_,\s-]+))?", re.IGNORECASE)


def _codes(text: str | None):
    if text is None:
        return None
    return {c.strip().upper() for c in re.split(r"[,\s]+", text) if c.strip()}


def suppressed(line: str, code: str, name: str) -> bool:
    if "#" not in line:
        return False
    for pattern in (_GRADAUDIT, _NOQA):
        for m in pattern.finditer(line):
            codes = _codes(m.group(1))
            if codes is None or not codes:
                return True  # a bare gradaudit-ignore or noqa comment silences the line
            if code.upper() in codes or name.upper() in codes:
                return True
            if any(len(c) < len(code) and code.upper().startswith(c) and c.startswith("GA") for c in codes):
                return True
    return False

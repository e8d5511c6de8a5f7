"""The JSON contract of rules.md, {"version": 1, "findings": [...]}, plus what could not be done:
"errors" (files that do not parse or could not be read, internal errors, fixes not written) and
"incomplete" (analyses a budget cut short), each {"kind", "path", "line", "column", "message"}."""

from __future__ import annotations

import json


def render(findings, errors, files_checked: int, **_) -> str:
    return (
        json.dumps(
            {
                "version": 1,
                "findings": [f.to_json() for f in findings],
                "errors": [p.to_json() for p in errors if p.is_error],
                "incomplete": [p.to_json() for p in errors if not p.is_error],
            },
            indent=2,
        )
        + "\n"
    )

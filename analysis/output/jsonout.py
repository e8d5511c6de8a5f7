"""The JSON contract of rules.md: {"version": 1, "findings": [...]}."""
from __future__ import annotations

import json


def render(findings, errors, files_checked: int, **_) -> str:
    return json.dumps({"version": 1, "findings": [f.to_json() for f in findings]}, indent=2) + "\n"

"""Output formats of `gradaudit check`: text, json, sarif, github."""

from __future__ import annotations

import importlib


class _Formats(dict):
    """Each format's `render(findings, problems, files analysed, **options)`, its module imported
    when first asked for (SARIF lists every rule's documentation: a text report needs none)."""

    def __missing__(self, name: str):
        if name not in NAMES:
            raise KeyError(name)
        render = self[name] = importlib.import_module(f"{__name__}.{NAMES[name]}").render
        return render


NAMES = {"text": "text", "json": "jsonout", "sarif": "sarif", "github": "github"}
FORMATS: dict = _Formats()

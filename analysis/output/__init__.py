"""Output formats of `gradaudit check`: text, json, sarif, github."""

from __future__ import annotations

from collections.abc import Callable

from . import github, jsonout, sarif, text

# each renders (findings, problems, files analysed, **options) as the report's text
FORMATS: dict[str, Callable[..., str]] = {
    "text": text.render,
    "json": jsonout.render,
    "sarif": sarif.render,
    "github": github.render,
}

"""Output formats of `gradaudit check`: text, json, sarif, github."""

from __future__ import annotations

from . import github, jsonout, sarif, text

FORMATS = {"text": text.render, "json": jsonout.render, "sarif": sarif.render, "github": github.render}

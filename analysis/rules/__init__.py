"""The rule registry: every module named gaNNN_*.py in this package holds one RULE."""

from __future__ import annotations

import importlib
import os

from .base import Rule


def _load() -> tuple:
    # the folder's file names, not pkgutil.iter_modules (which imports inspect: 15 ms at start-up)
    rules = []
    for name in sorted(os.listdir(__path__[0])):
        if name.startswith("ga") and name[2:5].isdigit() and name.endswith(".py"):
            module = importlib.import_module(f"{__name__}.{name[:-3]}")
            rules.append(module.RULE)
    rules.sort(key=lambda r: r.code)
    return tuple(rules)


RULES: tuple = _load()
BY_CODE = {r.code: r for r in RULES}
BY_NAME = {r.name: r for r in RULES}


def find_rule(key: str) -> Rule | None:
    key = key.strip()
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())

"""The rule registry: every module named gaNNN_*.py in this package holds one RULE."""

from __future__ import annotations

import importlib
import pkgutil

from .base import Rule


def _load() -> tuple:
    rules = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("ga") and info.name[2:5].isdigit():
            module = importlib.import_module(f"{__name__}.{info.name}")
            rules.append(module.RULE)
    rules.sort(key=lambda r: r.code)
    return tuple(rules)


RULES: tuple = _load()
BY_CODE = {r.code: r for r in RULES}
BY_NAME = {r.name: r for r in RULES}


def find_rule(key: str) -> Rule | None:
    key = key.strip()
    return BY_CODE.get(key.upper()) or BY_NAME.get(key.lower())

"""Rule selection: --select/--ignore, `[tool.gradaudit]` in pyproject.toml, per-file ignores."""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore


class ConfigError(Exception):
    pass


def _norm(items) -> tuple:
    if isinstance(items, str):
        items = [items]           # `select = "GA1"` means one selector, not five characters
    out = []
    for item in items or ():
        for part in str(item).split(","):
            part = part.strip()
            if part:
                out.append(part.upper() if part[:2].upper() == "GA" or part.upper() == "ALL" else part.lower())
    return tuple(out)


def unknown_selectors(selectors) -> list:
    """Selectors that match no rule: a typo silently selecting nothing is worse than an error."""
    from .rules import RULES
    bad = []
    for sel in selectors:
        if sel == "ALL":
            continue
        if not any(_matches(sel, r.code, r.name) for r in RULES):
            bad.append(sel)
    return bad


def _matches(selector: str, code: str, name: str) -> bool:
    if selector == "ALL":
        return True
    if selector.startswith("GA"):
        return code.startswith(selector)
    return selector == name


@dataclass(frozen=True)
class Config:
    select: tuple = ()                 # empty: every rule
    ignore: tuple = ()
    per_file_ignores: tuple = ()       # ((glob, (selectors...)), ...)
    exclude: tuple = ()
    root: str = ""                     # folder of the pyproject.toml it came from
    severity: dict = field(default_factory=dict, hash=False, compare=False)
    python: str = ""                   # the interpreter whose installed libraries are analysed

    def enabled(self, code: str, name: str) -> bool:
        if self.select and not any(_matches(s, code, name) for s in self.select):
            return False
        return not any(_matches(s, code, name) for s in self.ignore)

    def ignored_for_path(self, path: str, code: str, name: str) -> bool:
        if not self.per_file_ignores:
            return False
        rel = _relative(path, self.root)
        for pattern, selectors in self.per_file_ignores:
            if _glob(rel, pattern) and any(_matches(s, code, name) for s in selectors):
                return True
        return False

    def excluded(self, path: str) -> bool:
        rel = _relative(path, self.root)
        return any(_glob(rel, p) for p in self.exclude)

    def merged(self, select=None, ignore=None, extend_select=None) -> "Config":
        sel = _norm(select) if select else self.select
        if extend_select:
            sel = sel + _norm(extend_select)
        ign = self.ignore + _norm(ignore) if ignore else self.ignore
        return Config(sel, ign, self.per_file_ignores, self.exclude, self.root, self.severity, self.python)


def _relative(path: str, root: str) -> str:
    ap = os.path.abspath(path)
    base = os.path.abspath(root or os.getcwd())
    rel = os.path.relpath(ap, base)
    return rel.replace(os.sep, "/")


def _glob_regex(pattern: str):
    """gitignore-style: `*` within a folder name, `**/` any number of folders (zero included)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def _glob(rel: str, pattern: str) -> bool:
    pattern = pattern.replace(os.sep, "/")
    if pattern.endswith("/"):
        return rel.startswith(pattern) or (rel + "/").startswith(pattern)
    if _glob_regex(pattern).match(rel):
        return True
    if "/" not in pattern and fnmatch.fnmatch(rel.rsplit("/", 1)[-1], pattern):
        return True
    return False


def _has_table(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return "gradaudit" in tomllib.load(fh).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        return True   # let load_config report the broken file


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml with a [tool.gradaudit] table (like ruff and [tool.ruff])."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    for _ in range(64):
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    return None


def load_config(start: str = ".", explicit: str | None = None) -> Config:
    """The `[tool.gradaudit]` table of the nearest pyproject.toml (or of `explicit`)."""
    path = explicit or find_pyproject(start)
    if path is None:
        return Config(root=os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or "."))
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    table = data.get("tool", {}).get("gradaudit", {})
    return config_from_table(table, os.path.dirname(os.path.abspath(path)), source=path)


def config_from_table(table: dict, root: str, source: str = "settings") -> Config:
    known = {"select", "ignore", "per-file-ignores", "exclude", "extend-select", "severity", "python"}
    unknown = set(table) - known
    if unknown:
        raise ConfigError(f"{source}: unknown [tool.gradaudit] key(s): {', '.join(sorted(unknown))}")
    pfi = table.get("per-file-ignores", {}) or {}
    if not isinstance(pfi, dict):
        raise ConfigError(f"{source}: per-file-ignores must be a table of glob = [codes]")
    severity = table.get("severity", {}) or {}
    select = _norm(table.get("select")) + _norm(table.get("extend-select"))
    bad = unknown_selectors(select + _norm(table.get("ignore")))
    if bad:
        raise ConfigError(f"{source}: no rule matches {', '.join(repr(b) for b in bad)}")
    return Config(
        select=select,
        ignore=_norm(table.get("ignore")),
        per_file_ignores=tuple((glob, _norm(codes if isinstance(codes, list) else [codes]))
                               for glob, codes in pfi.items()),
        exclude=tuple(table.get("exclude", []) or ()),
        root=root,
        severity=dict(severity) if isinstance(severity, dict) else {},
        python=_python_path(table.get("python"), root, source),
    )


def _python_path(value, root: str, source: str) -> str:
    """`python = ".venv/bin/python"`: relative to the pyproject.toml's folder."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise ConfigError(f"{source}: python must be a path to an interpreter")
    value = os.path.expanduser(value)
    return value if os.path.isabs(value) else os.path.join(root, value)

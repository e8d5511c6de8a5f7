"""Rule selection: --select/--ignore, `[tool.gradaudit]` in pyproject.toml, per-file ignores."""

from __future__ import annotations

import fnmatch
import os
import re

from ..interp.budget import Budgets
from ..libraries.environment import check_python
from ..source.prebuilt import dataclass, field, replace
from .budgets import SETTINGS as BUDGET_SETTINGS
from .budgets import TIME_SETTING, budgets_from
from .schema import (
    Key,
    Problem,
    normalize_selectors,
    selector_matches,
    unknown_selectors,  # noqa: F401  (the CLI checks --select with it)
    validate,
)

SECTION = "[tool.gradaudit]"

# `[tool.gradaudit]` in pyproject.toml: the keys, their kinds and what they do (docs/configuration.md
# is generated from this table)
KEYS = (
    Key("select", "selectors", (), "Only these rules. Empty: every rule.", '["GA1"]'),
    Key("extend-select", "selectors", (), "Rules added to `select`.", '["GA110"]'),
    Key("ignore", "selectors", (), "Rules never reported.", '["GA105"]'),
    Key(
        "exclude",
        "strings",
        (),
        "Globs (relative to the folder of pyproject.toml) of files and folders "
        "`gradaudit check` skips when it walks a folder; the language server reports nothing for them. "
        "A file named on the command line is checked anyway.",
        '["legacy/**", "gen/"]',
    ),
    Key(
        "per-file-ignores",
        "selector-table",
        (),
        "Rules ignored in the files a glob matches.",
        '{ "notebooks/**/*.py" = ["GA103"] }',
    ),
    Key(
        "respect-gitignore",
        "bool",
        True,
        "Skip what `.gitignore` files (and `.git/info/exclude`) ignore when walking folders, as git does.",
        "false",
    ),
    Key(
        "severity",
        "severity-table",
        {},
        "Diagnostic severity in the editor, by rule code, prefix, "
        "name, family or confidence; the editor's `gradaudit.severity` setting wins over it.",
        '{ suspicious = "information", GA105 = "warning" }',
    ),
    Key(
        "python",
        "path",
        "",
        "The Python interpreter (or environment folder) whose installed libraries "
        "(transformers, timm, torchvision...) are read for the models they build; empty: the active "
        "virtualenv, else the project's `.venv` or `venv`, else the active conda env, else the interpreter "
        "running gradaudit. `--python` overrides it; one that does not exist is an error.",
        '".venv/bin/python"',
    ),
    # the budgets of the analysis (budgets.py); the command line's flags of the same names win
    *(Key(s.key, "count", s.default, s.doc, str(s.default)) for s in BUDGET_SETTINGS),
    Key(TIME_SETTING.key, "seconds", TIME_SETTING.default, TIME_SETTING.doc, "120"),
)


class ConfigError(Exception):
    """The configuration has problems: one line each, naming the file and the key."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _norm(items) -> tuple:
    """Selectors given on the command line (each may hold several, comma-separated)."""
    if isinstance(items, str):
        items = [items]
    return normalize_selectors(items or ())


def _matches(selector: str, code: str, name: str) -> bool:
    return selector_matches(selector, code, name)


@dataclass(frozen=True)
class Config:
    select: tuple = ()  # empty: every rule
    ignore: tuple = ()
    per_file_ignores: tuple = ()  # ((glob, (selectors...)), ...)
    exclude: tuple = ()
    root: str = ""  # folder of the pyproject.toml it came from
    severity: dict = field(default_factory=dict, hash=False, compare=False)
    respect_gitignore: bool = True
    source: str = ""  # the pyproject.toml it came from ('' for none)
    python: str = ""  # the interpreter whose installed libraries are analysed
    budgets: Budgets = field(default_factory=Budgets)  # how much of a program one analysis follows
    time_budget: float | None = None  # `time-budget`: seconds per file on the command line (None: not set)

    @property
    def python_origin(self) -> str:
        """What named `python`, as the output says it: '`python` in /p/pyproject.toml'."""
        return f"`python` in {self.source or 'the configuration'}" if self.python else ""

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

    def merged(self, select=None, ignore=None, extend_select=None) -> Config:
        sel = _norm(select) if select else self.select
        if extend_select and sel:  # an empty selection is every rule already
            sel = sel + _norm(extend_select)
        ign = self.ignore + _norm(ignore) if ignore else self.ignore
        return replace(self, select=sel, ignore=ign)


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
    return bool("/" not in pattern and fnmatch.fnmatch(rel.rsplit("/", 1)[-1], pattern))


def _toml():
    """The TOML reader, imported when a pyproject.toml mentions gradaudit (it costs more to import
    than the rest of the configuration: a project without the table never loads it)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib


def _has_table(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return True  # let load_config report the unreadable file
    if b"gradaudit" not in data:
        return False  # no [tool.gradaudit] table can be written without the name
    tomllib = _toml()
    try:
        return "gradaudit" in tomllib.loads(data.decode("utf-8")).get("tool", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # let load_config report the broken file


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


def read_config(start: str = ".", explicit: str | None = None) -> tuple[Config, list]:
    """(config, problems) from the nearest pyproject.toml (or `explicit`): a key with a problem
    is left at its default. The language server shows the problems; the CLI stops on them."""
    path = explicit or find_pyproject(start)
    if path is None:
        return Config(root=os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")), []
    root = os.path.dirname(os.path.abspath(path))
    tomllib = _toml()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return Config(root=root, source=path), [Problem(path, "", "", f"cannot be read: {exc}", "unreadable")]
    tool = data.get("tool", {})
    table = tool.get("gradaudit", {}) if isinstance(tool, dict) else {}
    return table_config(table, root, source=path)


def load_config(start: str = ".", explicit: str | None = None) -> Config:
    """The `[tool.gradaudit]` table of the nearest pyproject.toml (or of `explicit`); ConfigError
    if anything in it is wrong."""
    cfg, problems = read_config(start, explicit)
    if problems:
        raise ConfigError(problems)
    return cfg


def table_config(table: dict, root: str, source: str = "settings") -> tuple[Config, list]:
    """(config, problems) from a `[tool.gradaudit]` table; wrong keys stay at their defaults."""
    values, problems = validate(table, KEYS, source, SECTION)
    defaults = {k.name: k.default for k in KEYS}
    v = {**defaults, **values}
    python = _python_path(v["python"], root)
    why = check_python(python) if python else None
    if why is not None:  # an interpreter that cannot be read is an error, not a silent fallback
        problems.append(Problem(source, SECTION, "python", why))
        python = ""
    return Config(
        # an empty selection is every rule already: extending it changes nothing
        select=tuple(v["select"]) + tuple(v["extend-select"]) if v["select"] else (),
        ignore=tuple(v["ignore"]),
        per_file_ignores=tuple(v["per-file-ignores"]),
        exclude=tuple(v["exclude"]),
        root=root,
        severity=dict(v["severity"]),
        respect_gitignore=v["respect-gitignore"],
        source=source,
        python=python,
        budgets=budgets_from(values),
        time_budget=values.get(TIME_SETTING.key),
    ), problems


def _python_path(value: str, root: str) -> str:
    """`python = ".venv/bin/python"`: relative to the pyproject.toml's folder."""
    if not value:
        return ""
    value = os.path.expanduser(value)
    return value if os.path.isabs(value) else os.path.join(root, value)


def config_from_table(table: dict, root: str, source: str = "settings") -> Config:
    cfg, problems = table_config(table, root, source)
    if problems:
        raise ConfigError(problems)
    return cfg

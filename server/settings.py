"""Server settings: client settings (initializationOptions, didChangeConfiguration) merged with
the workspace's `[tool.gradaudit]`. Both are validated by gradaudit.analysis.check.schema: a wrong key
is reported (the server shows it once) and left at its default."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gradaudit.analysis.check.budgets import SETTINGS as BUDGETS
from gradaudit.analysis.check.budgets import budgets_from
from gradaudit.analysis.check.config import Config, read_config
from gradaudit.analysis.check.schema import SEVERITIES, Key, Problem, validate

SOURCE = "client settings"
SECTION = "gradaudit"

# what an editor may send, under a `gradaudit` key or at the top level (docs/configuration.md is
# generated from this table)
KEYS = (
    Key("select", "selectors", (), "Only these rules; replaces the project's `select`.", '["GA1"]'),
    Key("ignore", "selectors", (), "Rules never reported; added to the project's `ignore`.", '["GA105"]'),
    Key(
        "severity",
        "severity-table",
        {},
        "Diagnostic severity by rule code, prefix, name, family or confidence; wins over the project's `severity`.",
        '{"suspicious": "information"}',
    ),
    Key("debounce", "count", 150, "Milliseconds after a change before the document is analysed again.", "150"),
    Key("codeLens", "bool", True, "The training-step summary above each `backward()`.", "true"),
    Key("extraPaths", "strings", (), "More folders in which to look for imported project modules.", '["src"]'),
    Key(
        "docsUrl",
        "template",
        "",
        "Where a diagnostic's code links to, e.g. your own copy of the rule "
        "pages; empty: the rule's page shipped inside the installed package.",
        '"https://example.org/rules/{code}.md"',
    ),
    Key(
        "timeBudget",
        "seconds",
        10.0,
        "Seconds one analysis of a document may interpret; past it the document "
        "gets an `analysis incomplete` diagnostic saying what was not reached.",
        "10",
    ),
    Key(
        "memoryBudget",
        "count",
        1536,
        "Megabytes of memory one analysis may use (on Linux); past it the "
        "analysis is stopped and the document gets an `analysis incomplete` diagnostic.",
        "1536",
    ),
    Key(
        "interpreter",
        "path",
        "",
        "The Python interpreter (or environment folder) whose installed libraries "
        "(transformers, timm, torchvision...) are read for their models; empty: the project's `python`, "
        "else the active virtualenv, the workspace's `.venv` or `venv`, the active conda env, else the "
        "server's own environment. One that cannot be read is reported once and the search takes over. "
        "The VS Code extension sends the interpreter it runs the server with.",
        '"/home/me/project/.venv/bin/python"',
    ),
    # the engine's statement budgets (check/budgets.py): over the project's `[tool.gradaudit]` ones
    *(Key(s.editor, "count", s.default, f"{s.doc} Over the project's `{s.key}`.", str(s.default)) for s in BUDGETS),
)
_ATTR = {
    "select": "select",
    "ignore": "ignore",
    "severity": "severity",
    "debounce": "debounce_ms",
    "codeLens": "code_lens",
    "extraPaths": "extra_paths",
    "docsUrl": "docs_url",
    "interpreter": "interpreter",
    "timeBudget": "time_budget",
    "memoryBudget": "memory_budget_mb",
}

__all__ = ["KEYS", "SEVERITIES", "Settings"]


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict, hash=False, compare=False)  # 'GA101'/'confirmed'/... -> name
    debounce_ms: int = 150
    code_lens: bool = True
    extra_paths: tuple[str, ...] = ()
    docs_url: str = ""  # e.g. 'https://example.org/rules/{code}'; default: the packaged rule pages
    time_budget: float = 10.0  # seconds the engine interprets one document
    memory_budget_mb: int = 1536  # an analysis worker's memory for one document
    interpreter: str = ""  # the environment whose installed libraries are analysed (else the server's own)
    budgets: tuple = ()  # (editor key, value) of the budgets the client set: over the project's

    @staticmethod
    def from_client(raw: Any, base: Settings | None = None) -> tuple[Settings, list[Problem]]:
        """(settings, problems): keys the client sends replace `base`'s; a wrong one takes its default.
        `raw`: the client's JSON (initializationOptions, didChangeConfiguration's settings), any shape."""
        base = base or Settings()
        if raw is None:
            return base, []
        if isinstance(raw, dict) and isinstance(raw.get("gradaudit"), dict):
            raw = raw["gradaudit"]
        values, problems = validate(raw, KEYS, SOURCE, SECTION)
        defaults = Settings()
        wrong = {p.key for p in problems}
        changes = {_ATTR[k]: getattr(defaults, _ATTR[k]) for k in wrong if k in _ATTR}
        changes.update({_ATTR[k]: v for k, v in values.items() if k in _ATTR})
        budgets = dict(base.budgets)
        for s in BUDGETS:
            if s.editor in wrong:
                budgets.pop(s.editor, None)
            elif s.editor in values:
                budgets[s.editor] = values[s.editor]
        changes["budgets"] = tuple(sorted(budgets.items()))
        return replace(base, **changes), problems

    def engine_config(self, path: str) -> tuple[Config, list[Problem]]:
        """(config, problems) for a document: its pyproject.toml, then the client's select/ignore/severity."""
        cfg, problems = read_config(path)
        if self.select or self.ignore:
            cfg = replace(cfg, select=self.select or cfg.select, ignore=cfg.ignore + self.ignore)
        if self.severity:
            cfg = replace(cfg, severity={**cfg.severity, **self.severity})
        if self.budgets:
            cfg = replace(cfg, budgets=budgets_from(dict(self.budgets), cfg.budgets))
        return cfg, problems

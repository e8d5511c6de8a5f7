"""The analysis budgets as settings: one table for the `[tool.gradaudit]` keys, the command line's
flags, the editor's settings, and the advice an analysis cut short gives.

The interpreter gets the budgets as a value (`interp.budget.Budgets`); a budget that ran out is
named in the `Gap` it leaves, and `advice` says which setting raises it.
"""

from __future__ import annotations

import argparse

from ..interp.budget import TIME, Budgets, Gap
from ..source.prebuilt import dataclass, replace

TIME_BUDGET = 60.0  # seconds of interpretation per file on the command line; parsing is not interrupted


@dataclass(frozen=True)
class BudgetSetting:
    name: str  # the Budgets field ('time': the time budget)
    key: str  # the `[tool.gradaudit]` key; the flag is `--key`
    editor: str  # the editor's setting
    metavar: str
    doc: str

    @property
    def flag(self) -> str:
        return f"--{self.key}"

    @property
    def dest(self) -> str:
        """The argparse attribute of the flag."""
        return self.key.replace("-", "_")

    @property
    def default(self):
        return TIME_BUDGET if self.name == TIME else getattr(Budgets(), self.name)


SETTINGS = (
    BudgetSetting(
        "statements",
        "statement-budget",
        "statementBudget",
        "N",
        "Statements the engine follows in calls and loops for one checked file; past it calls are not "
        "followed and loops not run, and the output says what was not reached.",
    ),
    BudgetSetting(
        "script",
        "script-budget",
        "scriptBudget",
        "N",
        "Statements for the checked file's own run (its top level and what that calls).",
    ),
    BudgetSetting(
        "function",
        "function-budget",
        "functionBudget",
        "N",
        "Statements for each function with training code that nothing in the file calls (run on unknown "
        "arguments), for each class checked alone, and for all the module forwards and loss functions that "
        "nothing runs together (run alone on inputs that require grad).",
    ),
    BudgetSetting(
        "init",
        "init-budget",
        "initBudget",
        "N",
        "Statements for the `__init__` of an object that is not an `nn.Module` (a trainer, a config).",
    ),
    BudgetSetting(
        "module_init",
        "module-init-budget",
        "moduleInitBudget",
        "N",
        "Statements for the `__init__` of an `nn.Module`.",
    ),
    BudgetSetting(
        "loop_reserve",
        "loop-reserve",
        "loopReserve",
        "N",
        "Statements kept for loops with training code met after the statement budget ran out "
        "(at most half of it for one loop).",
    ),
    BudgetSetting(
        "imported_lines",
        "import-budget",
        "importBudget",
        "LINES",
        "Lines of the project's imported modules run for one checked file; past it further modules are "
        "not loaded and what they define is unknown.",
    ),
    BudgetSetting("call_depth", "call-depth", "callDepth", "N", "Nested calls the engine follows."),
)
TIME_SETTING = BudgetSetting(
    TIME,
    "time-budget",
    "timeBudget",
    "SECONDS",
    "Seconds of interpretation for one checked file on the command line; past it the output says what "
    "was not reached (the editor has its own `timeBudget`).",
)


def setting(name: str) -> BudgetSetting | None:
    """The setting of a Budgets field (or 'time')."""
    if name == TIME:
        return TIME_SETTING
    return next((s for s in SETTINGS if s.name == name), None)


def budgets_from(values: dict, base: Budgets | None = None) -> Budgets:
    """Budgets from settings by key (`statement-budget`) or editor name (`statementBudget`)."""
    out = {}
    for s in SETTINGS:
        for name in (s.key, s.editor):
            if values.get(name) is not None:
                out[s.name] = int(values[name])
    return replace(base or Budgets(), **out)


def advice(gap: Gap | None, editor: bool = False) -> str:
    """What raises the budget that cut `gap` short: 'raise it with --statement-budget (now 50000)'."""
    s = setting(gap.budget) if gap is not None and gap.budget else None
    if s is None:
        return ""
    if editor:
        if s.name == TIME:
            return f"raise it with the `{s.editor}` setting"
        return f"raise it with the `{s.editor}` setting or `{s.key}` in [tool.gradaudit]"
    return f"raise it with `{s.flag}`"


# ------------------------------------------------------------------ the command line's flags


def add_budget_arguments(parser, default_time: float | None = TIME_BUDGET):
    """Each budget as a flag (`check`, `audit`, `probe`): over `[tool.gradaudit]` and the default."""
    g = parser.add_argument_group("budgets", "how much of the program is followed; what a budget cuts is reported")
    limit = f"default {default_time:g}; 0: no limit" if default_time else "default: no limit"
    g.add_argument(
        TIME_SETTING.flag,
        type=float,
        default=None,
        metavar=TIME_SETTING.metavar,
        help=f"stop analysing a file after SECONDS and say what was not reached ({limit})",
    )
    for s in SETTINGS:
        g.add_argument(
            s.flag, type=_count, default=None, metavar=s.metavar, help=f"{_first(s.doc)} (default {s.default})"
        )


def with_budget_flags(cfg, args):
    """The configuration with the budget flags given on the command line over its budgets."""
    given = {s.key: getattr(args, s.dest) for s in SETTINGS if getattr(args, s.dest, None) is not None}
    return replace(cfg, budgets=budgets_from(given, cfg.budgets)) if given else cfg


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return n


def _first(doc: str) -> str:
    """The first sentence of a setting's doc, for --help."""
    head = doc.split("; ")[0].split(". ")[0].rstrip(".")
    return head[0].lower() + head[1:]

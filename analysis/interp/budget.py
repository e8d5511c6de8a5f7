"""What the interpreter's budgets left out, so that an analysis cut short says so.

The interpreter bounds its work: statement budgets for what it follows (calls, loops), and a
deadline. The budgets are a value (`Budgets`) given to the interpreter, each one a setting the
user can raise (check/budgets.py names its flag). What a budget stops is recorded here, with the
budget that stopped it: a loop never run, a function whose calls were not followed and that never
ran at all, the statements after the deadline. At the end `summary` counts the statements never
reached and names the first of them, for a warning that the user sees ("analysis incomplete: ...
(N statements not reached)") instead of a silent "No findings".
"""

from __future__ import annotations

import ast
import time

from ..source.prebuilt import dataclass
from ..source.span import Span

_BODIES = ("body", "orelse", "handlers", "finalbody", "cases")
TICK = 15  # the deadline is looked at every TICK + 1 statements (a statement can cost milliseconds)


@dataclass(frozen=True)
class Budgets:
    """How much of a program one analysis follows. Each field is a setting (check/budgets.py)."""

    # the main training scripts of DiT, detr, detectron2, timm and yolov5 need 5,300-39,500 statements
    # for the module body's run, in all (benchmarks/training_scripts.py: detectron2's plain_train_net
    # the most, its evaluation three times; timm 28,500); most scripts need hundreds
    statements: int = 50000  # statements per entry file; beyond it calls are not followed
    script: int = 40000  # statements for the module body's run
    function: int = 2000  # statements per other root (an uncalled function, one class checked alone)
    # a trainer object's __init__ builds the model, the optimizer, the data and the hooks: detectron2's
    # DefaultTrainer (DensePose's train_net.py) needs more than 3,000 statements
    init: int = 10000  # statements for the __init__ of an object that is not a module
    module_init: int = 4000  # statements for the __init__ of a module
    loop_reserve: int = 6000  # statements kept for training loops met after the budget ran out (half per loop)
    imported_lines: int = 80000  # lines of imported project modules run for one file
    call_depth: int = 12  # nested calls followed


# the budget that cut a place short, for the loops and calls stopped by the statement budgets
STATEMENTS, TIME = "statements", "time"


@dataclass(frozen=True)
class Gap:
    """An analysis cut short: why, the first statement not reached, how many were not."""

    reason: str
    first: Span | None
    count: int
    what: str = "not reached"  # what happened to the `count` statements
    # the budget that cut the first place short (a Budgets field, or 'time'); '' when no budget did
    budget: str = ""
    unit: str = "statement"  # what `count` counts

    def message(self) -> str:
        n = f"{self.count} {self.unit}{'s' if self.count != 1 else ''} {self.what}"
        return f"analysis incomplete: {self.reason} ({n})"


class Gaps:
    def __init__(self, deadline: float | None = None, seconds: float | None = None, budgets: Budgets | None = None):
        self.deadline = deadline  # time.monotonic() value
        self.seconds = seconds
        self.budgets = budgets or Budgets()
        self.stopped = False  # out of time: no further statement runs
        self.loops_cut: dict = {}  # loop node -> (SourceFile, the budget that cut it)
        self.loops_run: set = set()
        self.calls_cut: dict = {}  # FuncObj -> the budget that cut it
        self.cut_calls: list = []  # (SourceFile, call node, FuncObj, budget) of each call not followed
        self.not_started: list = []  # (SourceFile, [stmt]) blocks left when time ran out
        self.reserve_left = self.budgets.loop_reserve
        self.imports_cut: dict = {}  # module path -> None: not loaded, the imported-lines budget spent

    # ------------------------------------------------------------ hooks for the interpreter

    def check_time(self, interp):
        if self.deadline is not None and not self.stopped and time.monotonic() > self.deadline:
            self.stopped = True
            interp.budget = -1  # what runs now winds down: loops stop, calls are not followed
            interp.trace.incomplete = True

    def rest(self, stmts, stmt, sf):
        """Time ran out before `stmt` of the block `stmts`."""
        for i, s in enumerate(stmts):
            if s is stmt:
                self.not_started.append((sf, stmts[i:]))
                return

    def reserve(self, loop, interp, trains) -> bool:
        """The budget ran out before `loop`: a loop with training code in it (backward, step;
        `trains(sf, loop)` says) still runs, from a reserve, so that filler before the training
        loop does not starve it."""
        if self.stopped or self.reserve_left <= 0:
            return False
        if not trains(interp.sf, loop):
            return False
        grant = min(self.reserve_left, max(self.budgets.loop_reserve // 2, 1))
        self.reserve_left -= grant
        interp.budget = interp.steps + grant
        interp.root_budget = interp.steps - interp.root_start + grant
        return True

    def loop_cut(self, loop, sf, budget: str = STATEMENTS):
        self.loops_cut.setdefault(loop, (sf, budget))

    def loop_ran(self, loop):
        self.loops_run.add(loop)

    def call_cut(self, fn, budget: str = STATEMENTS, sf=None, node=None):
        self.calls_cut.setdefault(fn, budget)
        if sf is not None and node is not None and len(self.cut_calls) < 1000:
            self.cut_calls.append((sf, node, fn, budget))

    def import_cut(self, path: str):
        self.imports_cut.setdefault(path, None)

    # ------------------------------------------------------------ the report

    def not_reached(self) -> list:
        """(SourceFile, statements, the budget) of each block never reached (none run elsewhere)."""
        places: list = []
        for sf, stmts in self.not_started:
            places.append((sf, list(stmts), TIME))
        for loop, (sf, budget) in self.loops_cut.items():
            if loop not in self.loops_run:
                places.append((sf, list(loop.body), TIME if self.stopped else budget))
        for fn, budget in self.calls_cut.items():
            if not getattr(fn, "interpreted", 1):
                body = fn.node.body
                # a lambda: one expression, one statement not reached
                places.append(
                    (fn.scope.sf, body if isinstance(body, list) else [body], TIME if self.stopped else budget)
                )
        return places

    def summary(self, entry) -> Gap | None:
        """The statements never reached (none run elsewhere), first in the entry file if any."""
        places: list = []  # (SourceFile, first node, statements, budget)
        for sf, stmts, budget in self.not_reached():
            count = sum(_count(s) if isinstance(s, ast.stmt) else 1 for s in stmts)
            if count:
                places.append((sf, stmts[0], count, budget))
        if not places:
            return self._calls_gap(entry) or self._imports_gap(entry)
        total = sum(c for _, _, c, _ in places)
        mine = [p for p in places if p[0] is entry] or places
        sf, node, _, budget = min(mine, key=lambda p: (p[0] is not entry, p[1].lineno, p[1].col_offset))
        first = Span(
            sf.path,
            node.lineno,
            sf.char_col(node.lineno, node.col_offset),
            node.lineno,
            sf.char_col(node.lineno, node.col_offset),
        )
        if self.stopped:
            budget = TIME
        return Gap(self.reason(budget), first, total, budget=budget)

    def reason(self, budget: str) -> str:
        """'the budget of 50,000 statements followed ran out': which budget, and how much it was."""
        b = self.budgets
        if budget == TIME:
            return f"the time budget of {_seconds(self.seconds)} ran out"
        if budget == "script":
            return f"the budget of {b.script:,} statements for the script's own run ran out"
        if budget == "function":
            return f"the budget of {b.function:,} statements for a function run on unknown arguments ran out"
        if budget == "init":
            return f"the budget of {b.init:,} statements for an object's __init__ ran out"
        if budget == "module_init":
            return f"the budget of {b.module_init:,} statements for a module's __init__ ran out"
        if budget == "imported_lines":
            return f"the budget of {b.imported_lines:,} lines of imported project modules ran out"
        return f"the budget of {b.statements:,} statements followed ran out"

    def _calls_gap(self, entry) -> Gap | None:
        """Calls not followed of functions that ran elsewhere: no statement is left unreached, but
        what those calls would have done (`set_requires_grad(G, True)` after filler) was not seen."""
        cut = [(sf, node, budget) for sf, node, fn, budget in self.cut_calls if getattr(fn, "interpreted", 0)]
        if not cut:
            return None
        mine = [c for c in cut if c[0] is entry] or cut
        sf, node, budget = min(mine, key=lambda c: (c[0] is not entry, c[1].lineno, c[1].col_offset))
        col = sf.char_col(node.lineno, node.col_offset)
        first = Span(sf.path, node.lineno, col, node.lineno, col)
        if self.stopped:
            budget = TIME
        return Gap(
            self.reason(budget),
            first,
            len({(id(s), n.lineno, n.col_offset) for s, n, _ in cut}),
            "not followed",
            budget,
            "call",
        )

    def _imports_gap(self, entry) -> Gap | None:
        """Project modules left unloaded (the imported-lines budget spent): what they define is unknown."""
        if not self.imports_cut:
            return None
        n = len(self.imports_cut)
        return Gap(self.reason("imported_lines"), None, n, "not loaded", "imported_lines", "project module")


def _seconds(s) -> str:
    if s is None:
        return "the analysis"
    return f"{s:g} s"


def _count(stmt) -> int:
    """Statements in `stmt`, nested blocks included (expressions are not walked)."""
    n, work = 0, [stmt]
    while work:
        node = work.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            n += 1  # a definition not reached: its body runs only when called
            continue
        if isinstance(node, ast.stmt):
            n += 1
        for name in _BODIES:
            block = getattr(node, name, None)
            if block:
                work.extend(block)
    return n

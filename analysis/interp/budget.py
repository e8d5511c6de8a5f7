"""What the interpreter's budgets left out, so that an analysis cut short says so.

The interpreter bounds its work: a statement budget for what it follows (calls, loops), and a
deadline. What a budget stops is recorded here: a loop never run, a function whose calls were not
followed and that never ran at all, the statements after the deadline. At the end `summary`
counts the statements never reached and names the first of them, for a warning that the user
sees ("analysis incomplete: ... (N statements not reached)") instead of a silent "No findings".
"""

from __future__ import annotations

import ast
import time

from ..source.prebuilt import dataclass
from ..source.span import Span

_BODIES = ("body", "orelse", "handlers", "finalbody", "cases")
TICK = 15  # the deadline is looked at every TICK + 1 statements (a statement can cost milliseconds)
RESERVE = 6000  # statements kept for training loops met after the budget ran out
RESERVE_GRANT = 3000  # ... at most this much per loop


@dataclass(frozen=True)
class Gap:
    """An analysis cut short: why, the first statement not reached, how many were not."""

    reason: str
    first: Span | None
    count: int
    what: str = "not reached"  # what happened to the `count` statements

    def message(self) -> str:
        n = f"{self.count} statement{'s' if self.count != 1 else ''} {self.what}"
        return f"analysis incomplete: {self.reason} ({n})"


class Gaps:
    def __init__(self, deadline: float | None = None, seconds: float | None = None):
        self.deadline = deadline  # time.monotonic() value
        self.seconds = seconds
        self.stopped = False  # out of time: no further statement runs
        self.loops_cut: dict = {}  # loop node -> SourceFile
        self.loops_run: set = set()
        self.calls_cut: dict = {}  # FuncObj -> None
        self.not_started: list = []  # (SourceFile, [stmt]) blocks left when time ran out
        self.reserve_left = RESERVE

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

    def reserve(self, loop, interp, training_words) -> bool:
        """The budget ran out before `loop`: a loop with training code in it (backward, step)
        still runs, from a reserve, so that filler before the training loop does not starve it."""
        if self.stopped or self.reserve_left <= 0:
            return False
        sf = interp.sf
        text = "\n".join(sf.lines[loop.lineno - 1 : loop.end_lineno])
        if not training_words.search(text):
            return False
        grant = min(self.reserve_left, RESERVE_GRANT)
        self.reserve_left -= grant
        interp.budget = interp.steps + grant
        interp.root_budget = interp.steps - interp.root_start + grant
        return True

    def loop_cut(self, loop, sf):
        self.loops_cut.setdefault(loop, sf)

    def loop_ran(self, loop):
        self.loops_run.add(loop)

    def call_cut(self, fn):
        self.calls_cut.setdefault(fn, None)

    # ------------------------------------------------------------ the report

    def summary(self, entry, budget: int) -> Gap | None:
        """The statements never reached (none run elsewhere), first in the entry file if any."""
        places: list = []  # (SourceFile, first node, statements)
        for sf, stmts in self.not_started:
            count = sum(_count(s) for s in stmts)
            if count:
                places.append((sf, stmts[0], count))
        for loop, sf in self.loops_cut.items():
            if loop not in self.loops_run:
                count = sum(_count(s) for s in loop.body)
                if count:
                    places.append((sf, loop.body[0], count))
        for fn in self.calls_cut:
            if not getattr(fn, "interpreted", 1):
                sf = fn.scope.sf
                body = fn.node.body
                if not isinstance(body, list):  # a lambda: one expression, one statement not reached
                    places.append((sf, body, 1))
                    continue
                count = sum(_count(s) for s in body)
                if count:
                    places.append((sf, body[0], count))
        if not places:
            return None
        total = sum(c for _, _, c in places)
        mine = [p for p in places if p[0] is entry] or places
        sf, node, _ = min(mine, key=lambda p: (p[0] is not entry, p[1].lineno, p[1].col_offset))
        first = Span(
            sf.path,
            node.lineno,
            sf.char_col(node.lineno, node.col_offset),
            node.lineno,
            sf.char_col(node.lineno, node.col_offset),
        )
        if self.stopped:
            reason = f"the time budget of {_seconds(self.seconds)} ran out"
        else:
            reason = f"the budget of {budget:,} statements followed ran out"
        return Gap(reason, first, total)


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

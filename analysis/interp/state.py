"""The interpreter's state, as data: what one run knows and changes as it replays a program.

Every field the interpreter or a semantics module reads or writes is declared here, with what it
means; nothing is set on the interpreter from outside. Library-summary mode is a value
(`LibraryMode`) given to the interpreter when it is made, not a switch flipped on it.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from typing import Any

from ..source.prebuilt import dataclass, field
from ..source.program import Program, SourceFile
from .budget import Budgets, Gaps
from .frames import Frame, ModuleScope
from .objects import ModuleObj, Site
from .trace import Trace


@dataclass(eq=False)
class InterpState:
    program: Program
    entry: SourceFile
    budgets: Budgets = field(default_factory=Budgets)  # the limits of this run (settings)
    budget: int = Budgets.statements  # statements per entry file; beyond it calls are not followed
    trace: Trace = field(default_factory=Trace)
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))  # sequence numbers
    sf: SourceFile = None  # type: ignore[assignment]  # the file being run (set to entry below)
    ctx: tuple = ()  # ("root"|"call"|"loop", ...) entries: where the current statement runs
    path: list = field(default_factory=list)  # (branch key, arm, len(ctx)) of the conditions in force
    stack: list[Frame] = field(default_factory=list)
    scopes: dict[str, ModuleScope] = field(default_factory=dict)
    cur_stmt: ast.AST | None = None
    # grad mode
    grad_known: bool = True  # grad mode is known (enabled unless nograd is set)
    nograd: Site | None = None  # Site of the active no_grad region, if any
    casts: list = field(default_factory=list)  # autocast regions being run (torch/grad_mode.py)
    # `with accelerator.accumulate(model):` blocks being run: (branch key, len(ctx)) of each; the
    # optimizer's step and zero_grad in them run only on the micro-batch that syncs (a counter)
    accumulating: list = field(default_factory=list)
    # `torch.set_default_dtype(torch.float64)` ran: float tensors are float64 unless made otherwise
    default_f64: bool = False
    # conditions
    cond: int = 0  # depth of conditional execution
    cond_starts: list[int] = field(default_factory=list)  # seq at which each active condition began
    cond_oids: list[int] = field(default_factory=list)  # next_oid() at each active condition's start
    # per active `if`: {(object oid, attribute): value} stored on its first arm, and on the arm running
    # now; a store on the second arm to what the first also set replaces the value held before the if
    arm_stores: list[tuple[dict, dict]] = field(default_factory=list)
    # id(module globals) -> the environment of the module-level loop body running now: a function it
    # calls reads the names the loop has bound so far (`for run ...: optimizer = Adam(...); train()`)
    live_globals: dict[int, dict] = field(default_factory=dict)
    # modules being built and called
    module_depth: int = 0  # nesting of module forward calls
    init_stack: list[ModuleObj] = field(default_factory=list)  # modules whose __init__ runs
    graph_writes: int = 0  # graph-carrying values stored into objects older than the iteration
    # budgets (budget.py says what they cut)
    steps: int = 0
    ticks: int = 0
    root_index: int = 0
    root_start: int = 0
    root_budget: int = Budgets.script
    # (step limit, budget name) of the __init__ calls being run
    caps: list[tuple[int, str]] = field(default_factory=list)
    loaded_lines: int = 0
    gaps: Gaps = field(default_factory=Gaps)
    # modes
    shallow: bool = False  # checking one class: nested modules are built without running __init__
    no_force: bool = False  # running an imported module's top level: leave lazy imports alone
    star_misses: set = field(default_factory=set)  # (globals id, name) not found through `import *`
    # (package folder, registry name) -> the classes registered in it (libraries/registries.py)
    registries: dict = field(default_factory=dict)
    # the calls that ended last, with no statement run between their ends: (function, args, kwargs,
    # self, context, branch path, ticks at its end, result); the same call as the next statement, on
    # another arm of a branch, reuses the result (repeats.py)
    last_calls: list = field(default_factory=list)
    # call key -> the result of a call that left nothing behind, standing for the same call again
    # (summaries.py)
    summaries: dict = field(default_factory=dict)
    # framework state: DeepSpeed engines by the oid of the module they wrap (libraries/frameworks.py)
    ds_engines: dict[int, Any] = field(default_factory=dict)
    # `Process(target=...)` call sites whose target already ran (torch/processes.py)
    launched: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.sf is None:
            self.sf = self.entry


@dataclass(frozen=True, eq=False)
class LibraryMode:
    """Summarising library code (libraries/models.py): the interpreter builds a library's model
    classes to learn their structure, not to check them."""

    # module oid -> branch depth when its __init__ began
    init_cond: dict[int, int] = field(default_factory=dict)
    # (module oid, attribute) set under a branch the summary cannot decide (a config flag)
    conditional: set[tuple[int, str]] = field(default_factory=set)

    def note_attr(self, st: InterpState, m: ModuleObj, attr: str) -> None:
        """An attribute set under a condition the summary cannot decide is a part that may not exist."""
        start = self.init_cond.get(m.oid)
        if start is not None and st.cond > start:
            self.conditional.add((m.oid, attr))

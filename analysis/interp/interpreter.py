"""An abstract interpreter for training scripts, over the standard `ast`.

It replays a program statement by statement on abstract values (values.py): each function is run
with the abstract arguments of its call site (context-sensitive, depth and budget bounded), loops
run twice so that state carried into the next iteration is seen, and branches run both ways and
join. What happened is recorded in a Trace (trace.py) that the training-step model is built from.

The interpreter is the driver and the core services of core.py; statements, expressions and calls
are handler tables in their own modules (statements.py, expressions.py, calls.py), and everything
torch, libraries and frameworks mean is looked up in the semantics tables it is given
(semantics.py; built by libraries/register.py). Its state is one dataclass (state.py).
"""

from __future__ import annotations

import ast
import bisect
import collections
import re
from collections.abc import Callable

from ..ops import torch_api as T
from ..source.program import Program, SourceFile, installed
from . import calls, flags, recording, results, statements
from .budget import TICK, Budgets, Gaps
from .expressions import EXPRESSIONS, STAR, iter_value
from .frames import DRIVES_TRAINING, TRAINING_WORDS, Frame, ModuleScope, PathRaises, pytest_module
from .frames import mentions as _mentions
from .objects import (
    FROZEN,
    ClassObj,
    FuncObj,
    InstanceObj,
    LazyImport,
    ModuleObj,
    Site,
    SymObj,
    TensorObj,
    Unit,
    in_order,
    next_oid,
)
from .semantics import Semantics
from .state import InterpState, LibraryMode
from .statements import STATEMENTS
from .trace import Cut, Trace
from .values import NONE, UNKNOWN, Kind, V, const, join_all

# `self.x = [...]`, `= {}`, `= (a, b)`, `= list(...)`, `... requires_grad=True`: what GA109 looks for
_HIDING_ATTR = re.compile(
    r"self\.\w+\s*=\s*(?:\[|\{|list\(|dict\(|tuple\(|\(\s*(?:nn\.|[A-Z]\w*\())"
    r"|requires_grad\s*=\s*True|requires_grad_\("
    # `nn.Parameter(t).squeeze()`: an op's result kept instead of the parameter (GA113)
    r"|Parameter\([^\n]*\)\s*\.\s*\w+\("
)
# what a unit must hold to be worth running on its own: the ops whose numerical hazards the engine
# knows (GA401-GA405, GA407, GA408), where inputs that require grad make them matter
_NUMERIC_OPS = re.compile(
    r"\b(?:sqrt|rsqrt|log|log2|log10|exp|where|acos|asin|atanh|div|binary_cross_entropy|nll_loss|BCELoss|NLLLoss"
    r"|nanmean|nansum|nan_to_num|isnan|isfinite)\b"
    r"|\*\*\s*\(?\s*0?\.\d|\bpow\(\s*0?\.\d|/"
)

# a module's own attribute detached in its forward (`self.pos_embed.clone().detach()`, `self.w.data`)
_SELF_DETACH = re.compile(r"\bself\.\w+(?:\.\w+|\([^()]*\))*\.(?:detach\(\)|data\b)")

# a class named as a loss or a criterion
_CRITERION = re.compile(r"(?i)loss|criterion")
# a module's method that computes its loss (`calculate_loss`, `compute_loss`, `get_loss`, `loss`)
_LOSS_METHOD = re.compile(
    r"(?i)^_*(?:(?:calc(?:ulate)?|compute|get|get_total|forward|training|train)_)?loss(?:es)?(?:_dict|_fn|_function)?$"
)
# the classes an annotated parameter may be made of (`A | B | C`); a longer union names none
_MAX_ANNOTATED = 4

# or in-place writes, which may change a tensor an op saved (GA110): `x += y`, `x.add_(y)`, `x[m] = 0`
_INPLACE_OPS = re.compile(r"[-+*/]=(?!=)|\.\w+_\(|\]\s*=[^=]")


def _called(sf: SourceFile, node, pattern: re.Pattern) -> frozenset[str]:
    """The names `pattern` finds called in the text of `node`; cached on the node like `_mentions`."""
    cache = getattr(node, "_gradaudit_called", None)
    if cache is None:
        cache = node._gradaudit_called = {}
    names = cache.get(pattern)
    if names is None:
        names = cache[pattern] = frozenset(pattern.findall("\n".join(sf.lines[node.lineno - 1 : node.end_lineno])))
    return names


def _worth_running_alone(sf: SourceFile, node) -> bool:
    """Numeric ops or in-place writes: what a forward run on its own can show (GA110, GA401-GA408)."""
    return _mentions(sf, node, _NUMERIC_OPS) or _mentions(sf, node, _INPLACE_OPS)


# a layer built to change its input in place (`nn.LeakyReLU(0.2, inplace=True)`): a forward that
# only calls the module's layers may then change what an earlier layer saved (GA110)
_INPLACE_LAYERS = re.compile(r"\binplace\s*=\s*True\b")


def _builds_inplace_layers(sf: SourceFile, cls: ClassObj) -> bool:
    init = cls.methods.get("__init__")
    return init is not None and _mentions(sf, init.node, _INPLACE_LAYERS)


# a layer with parameters built by name (`nn.Conv2d(...)`, `torch.nn.Linear(...)`, `LSTM(...)` imported
# from torch.nn), or a parameter (`nn.Parameter(W)`): outside `__init__`, a forward that builds one
# makes new weights at every call (GA108), from a value that may carry gradient (GA104)
_LAYER_NAMES = "|".join(sorted({*T.PARAM_MODULES, *T.RECURRENT}))
_PARAM_LAYERS = re.compile(rf"\b(?:nn\.)?(?:{_LAYER_NAMES})\s*\(|\bParameter\s*\(")


def _builds_layers_when_run(sf: SourceFile, cls: ClassObj, layered: Callable[[], re.Pattern | None]) -> bool:
    """A method other than `__init__`, and not one `__init__` calls (ResNet's `_make_layer`), builds
    layers with parameters, or modules whose `__init__` does (`layered()`: their names, read when
    first needed)."""
    init = cls.methods.get("__init__")
    setup = _called(sf, init.node, _SELF_CALLED) if init is not None else frozenset()
    return any(
        name != "__init__"
        and name not in setup
        and isinstance(m.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (_mentions(sf, m.node, _PARAM_LAYERS) or ((p := layered()) is not None and _mentions(sf, m.node, p)))
        for name, m in cls.methods.items()
    )


def _layered_classes(scope: ModuleScope, program) -> re.Pattern | None:
    """`Name(` for the module classes of the file, and those it imports from other files of its
    project, whose `__init__` builds layers with parameters (read off their text, nothing run)."""
    names = set()
    for name, v in list(scope.globals.items()):
        for o in v.objs:
            if isinstance(o, ClassObj) and o.is_module and not installed(o.scope.sf.abspath):
                init = o.methods.get("__init__")
                if init is not None and isinstance(init.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if _mentions(o.scope.sf, init.node, _PARAM_LAYERS):
                        names.add(name)
            elif isinstance(o, LazyImport) and o.attr and not installed(o.path):
                sf = program.load(o.path) if program is not None else None
                if sf is not None and _class_builds_layers(sf, o.attr):
                    names.add(name)
    return re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(names)))})\s*\(") if names else None


def _class_builds_layers(sf: SourceFile, name: str) -> bool:
    """A class `name` at the top level of `sf` whose `__init__` builds layers with parameters."""
    for node in sf.tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return any(
                isinstance(b, ast.FunctionDef) and b.name == "__init__" and _mentions(sf, b, _PARAM_LAYERS)
                for b in node.body
            )
    return False


# the cuts a unit run alone reports (GA103-GA105): a detach may be a stop-gradient the caller wants
_UNIT_CUTS = (Cut.SCALAR, Cut.REWRAP, Cut.NUMPY)
_BACKWARD = re.compile(r"\.backward\s*\(")
_STEP = re.compile(r"\.step\s*\(")


def _is_self(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _callers_first(
    sf: SourceFile, scope: ModuleScope, units: list[tuple[FuncObj, ClassObj | None]]
) -> list[tuple[FuncObj, ClassObj | None]]:
    """The units, each loss function preceded by the methods of the file's module classes that call
    it and that nothing ran (a distiller's `forward_train` calling `pkt_loss(f_s, f_t)`): run there,
    the loss gets what the method gives it (a teacher's feature made under no_grad) instead of
    made-up inputs that all require grad, and is not run alone after."""
    losses = {fn.name for fn, cls in units if cls is None}
    if not losses:
        return units
    callers: list[tuple[FuncObj, ClassObj | None]] = []
    seen = {fn for fn, _ in units}
    for v in list(scope.globals.values()):
        for o in v.objs:
            if not (isinstance(o, ClassObj) and o.scope is scope and o.is_module):
                continue
            for m in o.methods.values():
                if m in seen or m.interpreted or m.is_static or m.is_classmethod or m.name == "__init__":
                    continue
                if _called(sf, m.node, _CALLED) & losses and not _mentions(sf, m.node, _BACKWARD):
                    seen.add(m)
                    callers.append((m, o))
    return callers + units if callers else units


def _is_test(fn: FuncObj) -> bool:
    """A function pytest runs: `test*` at the top level, or a method `test*` of a class `Test*`."""
    return fn.name.startswith("test") and (fn.cls is None or fn.cls.name.startswith("Test"))


def _trains_itself(sf: SourceFile, cls: ClassObj) -> bool:
    """A method of the class that runs backward() was run: the class is a learner that trains
    itself (an `observe` or `train_step`), and its forward, which that step did not reach, is the
    inference path, not a differentiable unit to run on inputs that require grad."""
    return any(m.interpreted and m.scope.sf is sf and _mentions(sf, m.node, _BACKWARD) for m in cls.methods.values())


def _components(sf: SourceFile, classes: list[ClassObj]) -> dict[ClassObj, set[ClassObj]]:
    """The module classes of the file each one's `__init__` builds (`self.sc_loss =
    SpectralConvergenceLoss()`): those run inside it when it is checked on its own."""
    by_name = {c.name: c for c in classes}
    out: dict[ClassObj, set[ClassObj]] = {}
    for c in classes:
        init = c.methods.get("__init__")
        if init is None:
            continue
        made = {by_name[n] for n in _called(sf, init.node, _CALLED) if n in by_name and by_name[n] is not c}
        if made:
            out[c] = made
    return out


def _built_by(cls: ClassObj | None, builds: dict[ClassObj, set[ClassObj]]) -> set[ClassObj]:
    """The module classes of the file that `cls` builds, directly or through what it builds."""
    out: set[ClassObj] = set()
    todo = [cls] if cls is not None else []
    while todo:
        for c in builds.get(todo.pop(), ()):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


_CALLED = re.compile(r"(?<![\w])([A-Za-z_]\w*)\s*\(")


def _trainers(sf: SourceFile) -> frozenset[str]:
    """The module-level functions of `sf` whose text calls backward, step, zero_grad, autograd.grad."""
    found = getattr(sf, "_gradaudit_trainers", None)
    if found is None:
        found = frozenset(
            node.name
            for node in sf.tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _mentions(sf, node, TRAINING_WORDS)
        )
        sf._gradaudit_trainers = found  # type: ignore[attr-defined]
    return found


def _star_trainers(program: Program, paths: list[str]) -> set[str]:
    """The training functions (`_trainers`) of the modules at `paths` and of every module they
    re-export with `from x import *`, read as text: a name bound through a package's chain of star
    imports. Private names are not re-exported by `import *`."""
    out: set[str] = set()
    seen: set[str] = set()
    todo = list(paths)
    while todo and len(seen) < 200:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        sf = program.load(path)
        if sf is None:
            continue
        out |= {n for n in _trainers(sf) if not n.startswith("_")}
        todo += _star_sources(program, sf)
    return out


def _star_sources(program: Program, sf: SourceFile) -> list[str]:
    """The modules `sf` re-exports with `from x import *`; kept on the file, which the editor's
    program keeps between edits of another document."""
    found = getattr(sf, "_gradaudit_star_sources", None)
    if found is None:
        found = [
            path
            for node in sf.tree.body
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
            if (path := program.resolve(sf, node.module or "", node.level or 0)) is not None
        ]
        sf._gradaudit_star_sources = found  # type: ignore[attr-defined]
    return found


def _calls_hazards(sf: SourceFile, scope, node, depth: int = 2) -> bool:
    """The text of `node` calls a function of the file whose own text holds a hazard, directly or
    through another of the file's functions (a forward computing its features in helpers: torchani's
    `angular_terms`, reached through `compute_aev`)."""
    for name in _called(sf, node, _CALLED):
        v = scope.globals.get(name)
        for o in v.objs if v is not None else ():
            if not isinstance(o, FuncObj) or o.scope is not scope or o.cls is not None or o.node is node:
                continue
            if isinstance(o.node, ast.Lambda):
                continue
            if _worth_running_alone(sf, o.node) or (depth > 1 and _calls_hazards(sf, scope, o.node, depth - 1)):
                return True
    return False


_SELF_CALLED = re.compile(r"\bself\.([A-Za-z_]\w*)\s*\(")
_LOOPS = re.compile(r"^\s*(?:for|while|async\s+for)\b", re.MULTILINE)


def _method_drivers(candidates: list[FuncObj]) -> list[tuple[FuncObj, ClassObj]]:
    """For the training methods among `candidates` of plain classes (a runner, an agent), the
    outermost methods of the class, its own or inherited from a project base class, that call them
    through `self` from a loop, directly or through each other (`runner()` looping epochs over
    `self.train()`, which loops batches over `self.train_step(...)`); with the class to run them on.
    Methods the class overrides are its own; module classes are left to their forwards and frameworks."""
    out: list[tuple[FuncObj, ClassObj]] = []
    for fn in candidates:
        cls = fn.cls
        if cls is None or fn.is_static or fn.is_classmethod or cls.is_module or cls.scope is None:
            continue
        visible: dict[str, FuncObj] = {}
        for c in cls.mro():
            for name, m in c.methods.items():
                visible.setdefault(name, m)
        names, found = {fn.name}, []
        for _ in range(LEVELS):
            new = [
                m
                for name, m in visible.items()
                if name not in names
                and name != "__init__"
                and not m.is_static
                and isinstance(m.node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and _called(m.scope.sf, m.node, _SELF_CALLED) & names
                and _mentions(m.scope.sf, m.node, _LOOPS)
            ]
            if not new:
                break
            found += new
            names |= {m.name for m in new}
        callees = set().union(*(_called(m.scope.sf, m.node, _SELF_CALLED) for m in found)) if found else set()
        out += [(m, cls) for m in found if m.name not in callees and (m, cls) not in out]
    return out


LEVELS = 3  # methods calling methods through self, followed up from a training method
_MAX_INHERITED = 4  # classes of one file whose inherited loops run (each is a root of its own)


def _abstract(fn) -> bool:
    """A method its class leaves to subclasses: its body (after a docstring) only raises
    NotImplementedError, or it is an `@abstractmethod` whose body is `...` or `pass`."""
    if not isinstance(fn, FuncObj) or not isinstance(fn.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = list(fn.node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None:
        exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
        if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
            return True
    marked = any(
        (isinstance(d, ast.Name) and d.id == "abstractmethod")
        or (isinstance(d, ast.Attribute) and d.attr == "abstractmethod")
        for d in fn.node.decorator_list
    )
    return marked and all(
        isinstance(b, ast.Pass) or (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)) for b in body
    )


def _inherited_loops(scope: ModuleScope) -> list[tuple[FuncObj, ClassObj]]:
    """For each class of the file that overrides a method called, through `self`, by a training
    method it inherits from a project base class in another class statement: the outermost of the
    inherited methods that reach the override, to run on an instance of the class. Only methods
    the class does not override itself (its own training methods are roots already)."""
    out: list[tuple[FuncObj, ClassObj]] = []
    seen = set()
    for v in list(scope.globals.values()):
        for cls in v.objs:
            if not isinstance(cls, ClassObj) or cls.scope is not scope or cls.oid in seen:
                continue
            seen.add(cls.oid)
            own = {n for n, m in cls.methods.items() if isinstance(m, FuncObj) and n != "__init__"}
            if not own:
                continue
            inherited: dict[str, FuncObj] = {}
            for c in cls.mro()[1:]:
                if c.scope is None:
                    continue  # a library base: its loop is the library's (a Trainer's), not read here
                for name, m in c.methods.items():
                    if name not in own and isinstance(m, FuncObj) and not m.is_static:
                        inherited.setdefault(name, m)
            if not inherited:
                continue
            # the inherited methods that reach an override through self, within LEVELS calls
            reach = set(own)
            for _ in range(LEVELS):
                more = {
                    n
                    for n, m in inherited.items()
                    if n not in reach
                    and isinstance(m.node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and _called(m.scope.sf, m.node, _SELF_CALLED) & reach
                }
                if not more:
                    break
                reach |= more
            loops = [
                m
                for n, m in inherited.items()
                if n in reach
                and _mentions(m.scope.sf, m.node, TRAINING_WORDS)
                and _mentions(m.scope.sf, m.node, _LOOPS)
            ]
            if not loops:
                continue
            # the outermost: not called through self by another inherited method that reaches an override
            callees = set().union(
                *(_called(m.scope.sf, m.node, _SELF_CALLED) for n, m in inherited.items() if n in reach)
            )
            outer = [m for m in loops if m.name not in callees] or loops[:1]
            out += [(m, cls) for m in outer]
            if len({c.oid for _, c in out}) >= _MAX_INHERITED:
                return out
    return out


_CALLED_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\s*\(")
# a function handed to a process launcher, which calls it: `fabric.launch(main, ...)`,
# `mp.spawn(main_worker, ...)`, detectron2's `launch(main, num_gpus, args=(args,))`, `mp.Process(target=run, ...)`
_LAUNCHED = re.compile(
    r"(?:\b(?:launch|spawn|start_processes)\s*\(\s*(?=[A-Za-z_]\w*\s*[,)])"
    r"|\b(?:Process|Thread)\s*\([^()]*?\btarget\s*=\s*)([A-Za-z_]\w*)"
)


def _callers_of(sf: SourceFile, candidates: list[FuncObj], others: list[FuncObj], imported: set[str]) -> list[FuncObj]:
    """The functions of the file that call a training function by name, one of the file's or one it
    imports (`imported`, as called here), directly or through each other (`train()` calling
    `step_fn = losses.get_step_fn(...)`): run first, they give their callees the arguments a driver
    gives, and reach the closures a factory returns."""
    names = {c.name for c in candidates if c.cls is None} | imported  # a method's name may be any object's
    found: list[FuncObj] = []
    for _ in range(3):
        new = []
        for fn in others:
            if fn.cls is not None or fn in found or fn.name in names:
                continue
            if any(n in names or n.rpartition(".")[2] in names for n in _called(sf, fn.node, _CALLED_DOTTED)) or (
                _called(sf, fn.node, _LAUNCHED) & names
            ):
                new.append(fn)
        if not new:
            break
        found += new
        names |= {fn.name for fn in new}
    return found


_DEFINED = re.compile(r"def\s+([A-Za-z_]\w*)\s*\(")

# the argument through which a driver hands a step method its iteration number
_ITERATION_ARGS = frozenset(
    ("current_iter", "current_step", "global_step", "iteration", "n_iter", "cur_iter", "iter", "step", "time_step")
)


def _per_iteration(fn: FuncObj) -> bool:
    """A method that does a whole training step and is handed the iteration number by its driver:
    the driver runs it once per iteration (a loop the engine does not see when it runs it alone)."""
    node = fn.node
    if fn.cls is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    names = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    if not names & _ITERATION_ARGS:
        return False
    if not (_mentions(fn.scope.sf, node, _BACKWARD) and _mentions(fn.scope.sf, node, _STEP)):
        return False
    # not a method with a loop of its own around its backward() (an epoch of batches)
    loops = [n for n in ast.walk(node) if isinstance(n, (ast.For, ast.While, ast.AsyncFor))]
    return not any(
        isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "backward"
        for lp in loops
        for c in ast.walk(lp)
    )


class Interpreter:
    """Replays one entry file (and what it imports) and fills a Trace."""

    def __init__(
        self,
        program: Program,
        entry: SourceFile,
        semantics: Semantics,
        budget: int | None = None,
        library: LibraryMode | None = None,
        budgets: Budgets | None = None,
        gaps: Gaps | None = None,
    ):
        """`budgets`: the limits of the run (settings); `budget` overrides its statements per file;
        `gaps`: what records the places the budgets cut (with the run's deadline, if any)."""
        b = budgets or Budgets()
        self.st = InterpState(
            program,
            entry,
            budgets=b,
            budget=b.statements if budget is None else budget,
            root_budget=b.script,
            gaps=gaps or Gaps(budgets=b),
        )
        self.sem = semantics
        self.library = library
        self._annotating: list[ClassObj] = []  # classes being built for annotated parameters

    # ---------------------------------------------------------------- core services (core.py)
    # Functions of the handler modules, bound as methods: `ip.call_value(...)` is
    # `calls.call_value(ip, ...)` with no extra call in between.

    assign = statements.assign
    bind_name = statements.bind_name
    name_objects = statements.name_objects
    iter_value = iter_value
    call_value = calls.call_value
    call_function = calls.call_function
    call_qualified = calls.call_qualified
    call_method = calls.call_method
    class_attr = calls.class_attr
    opaque_call = calls.opaque_call
    instantiate = calls.instantiate
    get_attr = calls.get_attr
    set_attr = calls.set_attr
    get_item = calls.get_item
    set_item = calls.set_item
    sym_unit = calls.sym_unit
    tensor_result = results.tensor_result
    event = recording.event

    def seq(self) -> int:
        return next(self.st.counter)

    def site(self, node) -> Site:
        return Site(self.st.sf, node)

    def run(self):
        scope = self.module_scope(self.st.entry, "__main__")
        self.st.root_index = 1
        self.st.ctx = (("root", 1),)
        self.exec_module(scope)
        self.st.sf = scope.sf
        self.st.stack = [Frame(None, scope, (), None, frozenset(), label="<module>")]
        self.run_roots(scope)
        for hook in self.sem.after_run:
            hook(self, scope)
        self.check_classes(scope)
        self.run_units(scope)
        return self.st.trace

    def module_scope(self, sf: SourceFile, name: str) -> ModuleScope:
        scope = self.st.scopes.get(sf.abspath)
        if scope is None:
            scope = ModuleScope(sf, name)
            self.st.scopes[sf.abspath] = scope
        return scope

    def exec_module(self, scope: ModuleScope):
        if scope.done or scope.running:
            return
        scope.running = True
        g = scope.globals
        g["__name__"] = const(scope.name)
        prev = (
            self.st.sf,
            self.st.stack,
            self.st.no_force,
            self.st.ctx,
            self.st.nograd,
            self.st.cond,
            self.st.grad_known,
        )
        self.st.sf = scope.sf
        self.st.stack = [Frame(None, scope, (), None, frozenset(), label="<module>")]
        # An imported module's top level binds names; it must not pull in the modules it
        # imports itself (that cascades through a whole package), so its lazy names stay lazy.
        self.st.no_force = scope.sf is not self.st.entry
        self.st.nograd, self.st.cond, self.st.grad_known = None, 0, True
        try:
            self.exec_block(scope.sf.tree.body, g)
        finally:
            (
                self.st.sf,
                self.st.stack,
                self.st.no_force,
                self.st.ctx,
                self.st.nograd,
                self.st.cond,
                self.st.grad_known,
            ) = prev
            scope.running = False
            scope.done = True

    def run_roots(self, scope: ModuleScope):
        """Functions with training code that nothing in the file ran: run them on unknown arguments."""
        sf = scope.sf
        src = sf.source
        # lines mentioning training words, found in one pass over the file
        hot: list[int] = []
        line, pos = 1, 0
        for m in TRAINING_WORDS.finditer(src):
            line += src.count("\n", pos, m.start())
            pos = m.start()
            if not hot or hot[-1] != line:
                hot.append(line)
        candidates = []
        others = []
        for fn in self._functions(scope):
            if fn.interpreted:
                continue
            node = fn.node
            i = bisect.bisect_left(hot, node.lineno)
            if i < len(hot) and hot[i] <= node.end_lineno:
                candidates.append(fn)
            else:
                others.append(fn)
        # pytest's tests that run a training loop of the project (`att.train_student(epochs=1)`): pytest
        # calls them, as a script's `__main__` calls its main; the library's own driver (KD_Lib)
        tests = (
            [fn for fn in others if _is_test(fn) and _mentions(sf, fn.node, DRIVES_TRAINING)]
            if pytest_module(sf.abspath)
            else []
        )
        if tests:
            others = [fn for fn in others if fn not in tests]
            candidates += tests
        imported = self._imported_trainers(scope, others)
        # a base class's training loop that calls hooks a class of this file fills in (KD_Lib's
        # `BaseClass.train_student()` calling `self.calculate_kd_loss(...)`, which the base leaves
        # to `raise NotImplementedError`): the loop runs on an instance of the class, as its users
        # run it, so that the class's hooks meet a training step
        for fn, cls in _inherited_loops(scope):
            self._run_root(fn, self.st.budgets.function, cls, optional=True)
        if not candidates and not imported:
            return
        drivers = _callers_of(sf, candidates, others, imported) + tests
        candidates += [d for d in drivers if d not in candidates]
        if not candidates:
            return
        # a trainer class's step method (`train_step`) that a loop of the class or of a project base
        # class calls (`BaseRunner.train()`: `for items in loader: self.train_step(items)`): that loop
        # runs it, on an instance of this class, so that what it keeps on `self` meets the next batch
        # names called anywhere, called by their bare name (not after a `.`), and the lines of the
        # calls (not a `def`), in one pass
        calls: collections.Counter = collections.Counter()
        bare: collections.Counter = collections.Counter()
        call_lines: dict[str, list[int]] = {}
        line, pos = 1, 0
        for m in _CALLED.finditer(src):
            name, start = m.group(1), m.start()
            calls[name] += 1
            if src[start - 1 : start] != ".":
                bare[name] += 1
            line += src.count("\n", pos, start)
            pos = start
            if not src[max(0, start - 4) : start].endswith("def "):
                call_lines.setdefault(name, []).append(line)
        bare.update(m.group(1) for m in _LAUNCHED.finditer(src))
        defs = collections.Counter(m.group(1) for m in _DEFINED.finditer(src))

        # where the file's code that runs calls each name: its top level and the functions run as
        # roots (a call in a function nothing runs, LAVIS' `train_epoch` forwarding `scaler=scaler`
        # to `_train_inner_loop`, gives no argument the engine sees)
        running = [(f.node.lineno, f.node.end_lineno or f.node.lineno) for f in candidates if f.scope.sf is sf]
        running += [
            (t.lineno, t.end_lineno or t.lineno)
            for t in sf.tree.body
            if not isinstance(t, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        ]

        def uncalled(fn: FuncObj) -> bool:
            # nothing in its file that runs calls it by name (`name(`, `.name(`): its optional
            # arguments are for callers in other files to give, or not (a base class's driver may be
            # in another)
            if fn.scope.sf is not sf:
                text = fn.scope.sf.source
                return sum(1 for m in _CALLED.finditer(text) if m.group(1) == fn.name) <= sum(
                    1 for m in _DEFINED.finditer(text) if m.group(1) == fn.name
                )
            own = (fn.node.lineno, fn.node.end_lineno or fn.node.lineno)
            return not any(
                a <= n <= b and not own[0] <= n <= own[1] for n in call_lines.get(fn.name, ()) for a, b in running
            )

        for driver, cls in _method_drivers(candidates):
            if not driver.interpreted:
                self._run_root(driver, self.st.budgets.script, cls, optional=uncalled(driver))
        # called by name somewhere else in the file: its callers will run it (a function by its bare
        # name: `fabric.setup(model)` is no call of litgpt's `setup()`, which runs `main()` then `fit()`)
        called = {fn for fn in candidates if (calls if fn.cls is not None else bare)[fn.name] - defs[fn.name] > 0}
        ordered = [c for c in candidates if c not in called] + [c for c in candidates if c in called]
        for fn in ordered:
            if fn.interpreted:
                continue
            # a driver (`main()` calling `fit()`) does a script's work: set-up, then the loop
            budget = self.st.budgets.script if fn in drivers else self.st.budgets.function
            made = self._run_root(fn, budget, optional=uncalled(fn))
            # a factory of training steps (`step_fn = make_step(model, opt)`) that nothing here
            # calls: the closures it returns hold the training code, run them as roots too
            for inner in made:
                if not inner.interpreted and _mentions(sf, inner.node, TRAINING_WORDS):
                    self._run_root(inner, self.st.budgets.function, optional=uncalled(inner))

    def _imported_trainers(self, scope: ModuleScope, others: list[FuncObj]) -> set[str]:
        """The calls of training functions of the project modules this file imports, as written
        here: `get_step_fn` for `from losses import get_step_fn`, `losses.get_step_fn` for
        `import losses` (a function is training code when its text calls backward, step, ...).
        Only modules that a function of `others` calls into are read (the editor asks at every edit)."""
        if self.library is not None or not others:
            return set()
        heads = {
            n.partition(".")[0] for fn in others if fn.cls is None for n in _called(scope.sf, fn.node, _CALLED_DOTTED)
        }
        out = set()
        for name, v in list(scope.globals.items()):
            if name not in heads:
                continue
            for o in v.objs:
                if not isinstance(o, LazyImport):
                    continue
                sf = self.st.program.load(o.path)
                if sf is None or sf is scope.sf:
                    continue
                names = _trainers(sf)
                if o.attr is None:
                    out |= {f"{name}.{n}" for n in names}
                elif o.attr in names:
                    out.add(name)
        stars = scope.globals.get(STAR)
        if stars is not None:
            # `from deep_rl import *`: the training functions re-exported through a package's chain
            # of `import *`, called here by their bare names (`run_steps(Agent(config))`)
            wanted = heads - scope.globals.keys()
            if wanted:
                paths = [o.path for o in stars.objs if isinstance(o, LazyImport)]
                out |= wanted & _star_trainers(self.st.program, paths)
        return out

    def _run_root(self, fn: FuncObj, budget: int, cls: ClassObj | None = None, optional: bool = False) -> list[FuncObj]:
        """Run `fn` on unknown arguments as a root of its own, within `budget` statements; the
        functions it returns. `cls`: a method inherited from a base class runs on an instance of it;
        `optional`: its tested optional arguments are given and not given (run_symbolic)."""
        self.st.root_index += 1
        self.st.ctx = (("root", self.st.root_index),)
        self.st.nograd = None
        self.st.grad_known = False  # its callers, not seen, may run it under no_grad
        self.st.cond = 0
        self.st.root_start = self.st.steps
        self.st.root_budget = budget
        out = self.run_symbolic(fn, cls, optional, per_iteration=_per_iteration(fn))
        items = out.items if out.items is not None else (out,)
        return [o for v in items if isinstance(v, V) for o in v.objs if isinstance(o, FuncObj) and o.scope is fn.scope]

    def _functions(self, scope: ModuleScope):
        seen = set()
        for v in list(scope.globals.values()):
            for o in v.objs:
                if isinstance(o, FuncObj) and o.scope is scope and o.oid not in seen:
                    seen.add(o.oid)
                    yield o
                elif isinstance(o, ClassObj) and o.scope is scope and o.oid not in seen:
                    seen.add(o.oid)
                    for m in o.methods.values():
                        if m.oid not in seen:
                            seen.add(m.oid)
                            yield m

    def run_units(self, scope: ModuleScope):
        """The forwards of the file's modules and its loss functions that nothing ran: each on its
        own, on inputs that require grad, so that the numerical hazards in them show with no training
        step (GA401-GA405; what reaches the unit's result is kept in trace.units)."""
        sf = scope.sf
        units: list[tuple[FuncObj, ClassObj | None]] = []
        for v in list(scope.globals.values()):
            for o in v.objs:
                if isinstance(o, ClassObj) and o.scope is scope and o.is_module:
                    # its own forward, or one inherited from a base class of the file that calls
                    # methods this class overrides (SETR's `decode`)
                    fwd = o.methods.get("forward") or o.lookup("forward")
                    if fwd is not None and not fwd.is_static and fwd.scope is scope:
                        units.append((fwd, o))
                    # its own loss methods (LibCity's `calculate_loss(batch)`: the forward, then the
                    # criterion): what a training step calls on the model, often from another file.
                    # Not a class that is a module only by an unread library base (a Trainer's
                    # `compute_loss` is the framework's step, not a model's loss)
                    for name, m in o.methods.items() if not o.opaque_base else ():
                        if (
                            _LOSS_METHOD.search(name)
                            and isinstance(m, FuncObj)
                            and not m.is_static
                            and m.scope is scope
                            and not isinstance(m.node, ast.Lambda)
                        ):
                            units.append((m, o))
                elif isinstance(o, ClassObj) and o.scope is scope and _CRITERION.search(o.name):
                    # a criterion that is no nn.Module (`class PairwiseLoss(Loss)` with `__call__`)
                    call = o.methods.get("__call__") or o.lookup("__call__")
                    if call is not None and not call.is_static and call.scope is scope:
                        units.append((call, o))
                elif isinstance(o, FuncObj) and o.scope is scope and o.cls is None and "loss" in o.name.lower():
                    units.append((o, None))  # a loss function
        builds = _components(sf, [cls for _, cls in units if cls is not None])
        memo: list = []

        def layered() -> re.Pattern | None:
            if not memo:
                memo.append(_layered_classes(scope, self.st.program))
            return memo[0]

        parts = set().union(*builds.values()) if builds else set()
        # a module's forward the file ran where no backward() followed (a demo under `__main__` on
        # data that requires no grad) showed nothing of its gradient: it runs alone as well (not a
        # loss function, which a script of hand-written gradients runs to log a value)
        trains = bool(self.st.trace.backwards)
        units = [
            (fn, cls)
            for fn, cls in units
            if not (fn.interpreted and fn.cls is cls and (trains or cls is None))
            and not isinstance(fn.node, ast.Lambda)
            and (
                _worth_running_alone(sf, fn.node)
                or (cls is not None and fn.name != "forward" and bool(_LOSS_METHOD.search(fn.name)))
                or (cls is not None and _calls_hazards(sf, scope, fn.node))
                or (cls is not None and _mentions(sf, fn.node, _SELF_DETACH))
                or (
                    cls is not None
                    and (
                        # a loss method its forward calls in training mode (a detector's `_compute_losses`)
                        any(
                            (m := cls.lookup(name)) is not None
                            and m.scope is scope
                            and not isinstance(m.node, ast.Lambda)
                            and _worth_running_alone(sf, m.node)
                            for name in _called(sf, fn.node, _SELF_CALLED)
                        )
                    )
                )
                or (
                    cls is not None
                    and (
                        _builds_inplace_layers(sf, cls)
                        or _builds_layers_when_run(sf, cls, layered)
                        or any(
                            _worth_running_alone(sf, f.node)
                            for c in builds.get(cls, ())
                            if (f := c.methods.get("forward"))
                        )
                    )
                )
            )
            and (cls is None or not _trains_itself(sf, cls))
        ]
        # a component of another module of the file runs inside it, on what that one gives it: after
        # its owners, and alone only when none of them ran it (openfold's template block, which its
        # stack runs through another file's checkpointing helper, not followed here)
        left = [u for u in units if u[1] in parts and not u[0].interpreted]
        # an owner among them first (ParallelWaveGAN's STFT loss before the spectral-convergence
        # loss it builds), so that what it builds runs inside it, on what it gives, and not alone
        left.sort(key=lambda u: -len(_built_by(u[1], builds)))
        units = [u for u in units if u[1] not in parts] + left
        units = _callers_first(sf, scope, units)
        if not units:
            return
        ran = {id(fn): fn.interpreted for fn, _ in units}
        # What a unit alone does is evidence only for its numerical hazards: its events (a loop
        # inside a forward, writes made by __init__ on made-up arguments) and the budgets it used
        # up stay out of the file's analysis. Each runs shallow (nested modules are not built,
        # other files' functions not followed), all of them within the budget of one function.
        st = self.st
        saved = (st.trace, st.gaps, st.steps, st.budget)
        st.trace = Trace()
        st.gaps = Gaps(saved[1].deadline, saved[1].seconds, st.budgets)
        st.shallow = True
        try:
            # all of a file's units share one function budget: what is left unrun is no claim
            allowance = st.steps + st.budgets.function
            for fn, cls in units:
                if st.steps >= allowance:
                    break
                if fn.interpreted > ran[id(fn)] and fn.cls is cls:
                    continue  # run inside a caller that ran before it
                st.root_index += 1
                st.ctx = (("root", st.root_index),)
                st.nograd, st.grad_known, st.cond = None, True, 0
                st.root_start = st.steps
                st.root_budget, st.budget = st.budgets.function, allowance
                inst = self.symbolic_instance(cls, Site(sf, cls.node)) if cls is not None else None
                args, kwargs = self.symbolic_args(fn, cls is not None, self.grad_input, Site(sf, fn.node))
                required = _required_when_none(fn.node)
                for name in required:
                    # `if self.training and gt_boxes is None: raise`: a caller that trains gives it
                    kwargs[name] = self.sym_value(name, Site(sf, fn.node))
                for name in _optional_tensors(fn.node):
                    # `lens=None`, then `if lens is not None: o.masked_fill_(...)`: a caller may give
                    # it, and what the function does with it is what a unit run alone is for (not
                    # an option object, `inference_params=None`: a generation cache's path)
                    if name not in required:
                        kwargs[name] = join_all([NONE, self.sym_value(name, Site(sf, fn.node))])
                made = len(st.trace.forward_new)
                out = calls.call_function(self, fn, args, kwargs, fn.node, self_v=inst)
                # the versions of what its result's graph saved, as the unit leaves them (GA110);
                # a result may be a dict or a tuple of losses (a detector's training forward)
                saves = recording.held_saves(out).union(*(it.saves for it in out.items or () if isinstance(it, V)))
                out = out.replace(saves=saves)
                versions = {sv: sv.storage.version for sv in saves}
                # the methods of its own class and of the file's classes it derives from: a save
                # there (a template method's `forward_cell`, the subclass's LSTM) and a change in
                # the unit are one object's code, not a nested module's
                own = tuple(
                    Site(sf, m.node)
                    for c in (cls.mro() if cls is not None else ())
                    if isinstance(c, ClassObj) and c.scope is scope
                    for m in c.methods.values()
                    if isinstance(m, FuncObj) and m is not fn and not isinstance(m.node, ast.Lambda)
                )
                st.trace.units.append((out, fn.qual, versions, Site(fn.scope.sf, fn.node), own))
                # a term made a Python number or a fresh tensor and added to one that carries
                # gradient (`rate = torch.tensor(float(log(p).sum()))` in `rate + distortion`):
                # whatever the caller gives, that term sends no gradient back (a detach may be a
                # stop-gradient the caller wants)
                for c in st.trace.dead_cuts:
                    if c.kind in _UNIT_CUTS and (c.removed or c.removed_weak):
                        st.trace.unit_cuts.append((c, fn.qual))
                st.trace.dead_cuts.clear()
                # a weight its result is computed with, made by `nn.Parameter(W)` of a value that
                # carried gradient (EvolveGCN's LSTM-made weight): what W came from, and reaches the
                # result by no other path, gets no gradient whatever the caller does
                for u in st.trace.rewrapped:
                    for c in u.source_cuts if u.frozen != FROZEN else ():
                        if (c.removed | c.removed_weak) - out.org - out.weak:
                            st.trace.unit_cuts.append((c, fn.qual))
                st.trace.rewrapped.clear()
                # a `.detach()` / `.data` of the unit's own trainable parameter that reaches its result
                # by no other path (`x + self.pos_embed.clone().detach()`): whatever the caller does,
                # that parameter gets no gradient from this forward (one updated by hand in it, an EMA
                # codebook, is not trained by gradient anyway)
                by_hand = {u for u, _, _ in st.trace.manual_updates} | {u for u, _, _ in st.trace.writes}
                for c in out.cuts:
                    if c.kind in (Cut.DETACH, Cut.DATA) and not c.role:
                        lost = {u for u in c.removed if u.kind == Unit.PARAM and u.frozen != FROZEN}
                        cut_off = frozenset(lost - out.org - out.weak - by_hand)
                        if cut_off:
                            # only those: a parameter the result reaches by another path (a VQ's
                            # input projection through its commitment loss) is not cut off
                            st.trace.unit_cuts.append((c.narrowed(cut_off), fn.qual))
                # layers the forward builds and applies: their new weights reach its result (GA108)
                for site, params in st.trace.forward_new[made:]:
                    if params & out.org:
                        st.trace.unit_new.append((site, params, fn.qual))
        finally:
            alone = st.trace
            st.trace, st.gaps, st.steps, st.budget = saved
            st.shallow = False
            st.trace.risks.extend(alone.risks)
            st.trace.units.extend(alone.units)
            st.trace.unit_new.extend(alone.unit_new)
            st.trace.unit_cuts.extend(alone.unit_cuts)
            # a forward run alone: whether its callers give it gradient is not known
            st.trace.split_writes.extend((site, False) for site, _ in alone.split_writes)

    def grad_input(self, name: str, site: Site) -> V:
        """An argument of a unit run alone: unknown, and carrying gradient from something."""
        o = SymObj(name, site, self.seq())
        # a storage of its own too: a view of it that an op saves and a later write into it (an
        # in-place change of the unit's input, `z[..., i] = single`) are one tensor's versions
        return V(
            Kind.UNKNOWN | Kind.TENSOR, frozenset((o, TensorObj(site))), weak=frozenset((calls.sym_unit(self, o),))
        )

    def run_symbolic(self, fn: FuncObj, cls: ClassObj | None = None, optional: bool = False, per_iteration=False):
        site = Site(fn.scope.sf, fn.node)
        self_v = None
        if fn.cls is not None and not fn.is_static:
            if fn.is_classmethod:
                self_v = V(Kind.CLASS, frozenset((cls or fn.cls,)))
            else:
                self_v = self.symbolic_instance(cls or fn.cls, site)
        args, kwargs = self.symbolic_args(fn, self_v is not None, self.annotated_maker(fn), site)
        for name in _optional_and_tested(fn.node) if optional else ():
            # `def reinforce(self, loss=None): if loss is not None: loss.backward()`: its callers, in
            # other files, may give it; the default alone would decide the test and skip the step.
            # (A function its file calls is run by that call, with its arguments.)
            kwargs[name] = join_all([NONE, self.sym_value(name, site)])
        if per_iteration:
            # one iteration of the loop its driver, not seen here, runs it in (BasicSR's
            # `optimize_parameters(self, current_iter)`): what it builds is built at every step.
            # (The instance was made before the loop, as its driver makes it.)
            self.st.ctx += (("loop", fn.node, self.seq(), fn.scope.sf, 0, next_oid()),)
        return calls.call_function(self, fn, args, kwargs, fn.node, self_v=self_v)

    @staticmethod
    def symbolic_args(fn: FuncObj, drop_first: bool, make, site: Site) -> tuple[list, dict]:
        """Made-up arguments for a call of `fn`: `make(name, site)` for each parameter without a
        default (the first, self or cls, left out when `drop_first`); the others keep their defaults."""
        params = fn.node.args
        names = [a.arg for a in params.posonlyargs + params.args][1 if drop_first else 0 :]
        args = [make(name, site) for name in names[: max(0, len(names) - len(params.defaults))]]
        kwargs = {a.arg: make(a.arg, site) for a, d in zip(params.kwonlyargs, params.kw_defaults) if d is None}
        return args, kwargs

    def sym_value(self, name: str, site: Site) -> V:
        return V(Kind.UNKNOWN, frozenset((SymObj(name, site, self.seq()),)))

    def symbolic_instance(self, cls: ClassObj, site: Site) -> V:
        if cls.sym_instance is not None:
            # a later root that uses it rests on the annotations it was built from too
            self.st.trace.assumed.extend((self.st.root_index, t) for t in cls.sym_assumed)
            return cls.sym_instance
        cls.sym_instance = V(Kind.UNKNOWN, frozenset((SymObj("self", site, self.seq()),)))  # recursion guard
        assumed = len(self.st.trace.assumed)
        init = cls.lookup("__init__")
        args, kwargs = (
            self.symbolic_args(init, True, self.annotated_maker(init, cls), site) if init is not None else ([], {})
        )
        if init is None:
            # a @dataclass: what its own __init__ takes, each field without a default
            required, none = calls.dataclass_defaults(cls)
            kwargs = {name: self.sym_value(name, site) for name in required}
        else:
            none = _optional_and_tested(init.node)
        for name in _tested_on_self(cls.node, none):
            # `gradient_clipping: Optional[float] = None`, then `if self.gradient_clipping is not None:
            # clip...` in a training method: whoever builds the object may give it (run_symbolic)
            kwargs[name] = join_all([NONE, self.sym_value(name, site)])
        v = self._construct(cls, args, kwargs, "self")
        cls.sym_instance = v
        self._set_up(cls, v, site)
        cls.sym_assumed = tuple(text for _, text in self.st.trace.assumed[assumed:])
        return v

    def annotated_maker(self, fn: FuncObj, owner: ClassObj | None = None):
        """`sym_value`, except for a parameter annotated with module classes of the project
        (`policy: StudentTeacher | StudentTeacherRecurrent`, on the parameter or, for `__init__`,
        on the class's attribute of that name): an instance of each, built on unknown arguments.
        What a training step then shows rests on the annotation (trace.assumed)."""
        anns = {
            a.arg: a.annotation
            for a in fn.node.args.posonlyargs + fn.node.args.args + fn.node.args.kwonlyargs
            if a.annotation is not None
        }
        if owner is not None and fn.name == "__init__":
            for stmt in owner.node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    anns.setdefault(stmt.target.id, stmt.annotation)
        if not anns:
            return self.sym_value

        def make(name: str, site: Site) -> V:
            ann = anns.get(name)
            v = self._annotated_value(fn, name, ann, site) if ann is not None else None
            return v if v is not None else self.sym_value(name, site)

        return make

    def _annotated_value(self, fn: FuncObj, name: str, ann: ast.expr, site: Site) -> V | None:
        classes = []
        for c in self._annotation_classes(fn.scope, ann, 0):
            if c not in classes:
                classes.append(c)
        if not classes and self._names_torch_module(fn.scope, ann):
            return self.sem.annotated_module(self, name, ann)
        if classes and all(_abstract(c.lookup("forward")) for c in classes):
            # `model: RewardNet`, a project base whose forward its subclasses write: whichever the
            # caller gives, a module whose parameters the engine does not see (as for `nn.Module`)
            return self.sem.annotated_module(self, name, ann)
        if not classes or len(classes) > _MAX_ANNOTATED or any(c in self._annotating for c in classes):
            return None
        self._annotating.extend(classes)
        try:
            values = [self._annotated_instance(c, site) for c in classes]
        finally:
            del self._annotating[-len(classes) :]
        kinds = " or ".join(f"`{c.name}`" for c in classes)
        which = "a " if len(classes) == 1 else "one of "
        text = f"`{name}` is taken to be {which}{kinds}, as annotated (line {ann.lineno})"
        self.st.trace.assumed.append((self.st.root_index, text))
        return join_all(values)

    def _annotated_instance(self, cls: ClassObj, site: Site) -> V:
        """A fresh instance (two parameters annotated with one class are two objects), built as the
        symbolic instance is."""
        init = cls.lookup("__init__")
        args, kwargs = (
            self.symbolic_args(init, True, self.annotated_maker(init, cls), site) if init is not None else ([], {})
        )
        return self._construct(cls, args, kwargs, cls.name)

    def _construct(self, cls: ClassObj, args: list, kwargs: dict, label: str) -> V:
        """`cls(*args, **kwargs)` at the class statement, for an object whose maker the engine did not
        see. The construction is a set-up of its own (a network built deep in __init__), within the
        budget of one function run on unknown arguments: charged to the method that needed it, it
        left that method too little to reach its training code, the more so the more of the
        construction the init budget let run."""
        call = ast.Call(func=ast.Name(id=cls.name, ctx=ast.Load()), args=[], keywords=[])
        ast.copy_location(call, cls.node)
        call.end_lineno, call.end_col_offset = cls.node.lineno, cls.node.col_offset
        st = self.st
        saved, start = (st.root_start, st.root_budget), st.steps
        st.root_start, st.root_budget = start, st.budgets.function
        try:
            return calls.instantiate(self, cls, args, kwargs, call, label=label)
        finally:
            st.root_start, st.root_budget = saved[0] + (st.steps - start), saved[1]

    def _annotation_classes(self, scope: ModuleScope, node: ast.expr, depth: int) -> list[ClassObj]:
        """The project's module classes an annotation names: `A`, `pkg.A`, `A | B`, `Optional[A]`,
        `Union[A, B]`, `"A"`; anything else (a library class, `nn.Module`, a protocol) names none."""
        if depth > 4:
            return []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._annotation_classes(scope, node.left, depth + 1) + self._annotation_classes(
                scope, node.right, depth + 1
            )
        if isinstance(node, ast.Subscript):
            head = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
            if head not in ("Optional", "Union"):
                return []
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [c for p in parts for c in self._annotation_classes(scope, p, depth + 1)]
        v = self._annotation_value(scope, node)
        if v is None:
            return []
        return [
            o
            for o in in_order(v.objs)
            if isinstance(o, ClassObj) and o.scope is not None and not installed(o.scope.sf.abspath) and o.is_module
        ]

    def _names_torch_module(self, scope: ModuleScope, node: ast.expr) -> bool:
        """The annotation is torch's `nn.Module` (`torch.nn.Module`, `Module` of `from torch.nn import
        Module`), alone or `Optional[...]`: whatever module the caller gives."""
        if isinstance(node, ast.Subscript) and getattr(node.value, "id", getattr(node.value, "attr", "")) == "Optional":
            node = node.slice
        if not isinstance(node, (ast.Name, ast.Attribute)) or (isinstance(node, ast.Name) and node.id != "Module"):
            return False
        if isinstance(node, ast.Attribute) and node.attr != "Module":
            return False
        v = self._annotation_value(scope, node)
        return v is not None and not v.objs and v.const in ("torch.nn.Module", "torch.nn.modules.module.Module")

    def _annotation_value(self, scope: ModuleScope, node: ast.expr) -> V | None:
        if isinstance(node, ast.Name):
            return self.lookup_global(scope.globals, node.id)
        if isinstance(node, ast.Attribute):
            owner = self._annotation_value(scope, node.value)
            return calls.get_attr(self, owner, node.attr, node, None) if owner is not None else None
        return None

    def _set_up(self, cls: ClassObj, v: V, site: Site) -> None:
        """A trainer object's state that its training methods read but `__init__` leaves unset or
        None, and another of its methods sets (`self._updater = None`, then `init_train()` builds
        the updater, the optimizer, the scaler): that method has run before a training method reads
        it, or the read would fail. Run each such method once on the instance, on unknown arguments,
        before the training methods; not ones that backpropagate or step (those are training
        methods, run as roots of their own)."""
        objs = [o for o in v.objs if isinstance(o, (InstanceObj, ModuleObj))]
        if len(objs) != 1 or cls.scope is None:
            return
        held = objs[0].attrs
        if isinstance(objs[0], ModuleObj):
            held = {**held, **objs[0].children}
        sf = cls.scope.sf
        methods = [m for m in cls.methods.values() if m.scope.sf is sf and not isinstance(m.node, ast.Lambda)]
        training = [m for m in methods if _mentions(sf, m.node, _BACKWARD) or _mentions(sf, m.node, _STEP)]
        needed = {
            n.attr
            for m in training
            for n in ast.walk(m.node)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and _is_self(n.value)
        }
        needed = {a for a in needed if a not in held or (isinstance(held[a], V) and held[a].k == Kind.NONE)}
        if not needed:
            return
        for m in methods:
            if m in training or m.interpreted or m.name.startswith("__") or m.is_static or m.is_classmethod:
                continue
            sets = {
                t.attr
                for n in ast.walk(m.node)
                if isinstance(n, (ast.Assign, ast.AnnAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                if isinstance(t, ast.Attribute) and _is_self(t.value)
            }
            if not sets & needed:
                continue
            args, kwargs = self.symbolic_args(m, True, self.sym_value, site)
            # a set-up of its own, within the budget of one function run on unknown arguments
            st = self.st
            saved, start = (st.root_start, st.root_budget), st.steps
            st.root_start, st.root_budget = start, st.budgets.function
            try:
                calls.call_function(self, m, args, kwargs, m.node, self_v=v)
            finally:
                # what the set-up used is not charged to the method that needed it
                st.root_start, st.root_budget = saved[0] + (st.steps - start), saved[1]

    def check_classes(self, scope: ModuleScope):
        """Module classes nothing instantiated: build one to see what __init__ registers (GA109)."""
        sf = scope.sf
        for v in list(scope.globals.values()):
            for o in v.objs:
                if (
                    isinstance(o, ClassObj)
                    and o.scope is scope
                    and o.is_module
                    and o.sym_instance is None
                    and not o.instantiated
                ):
                    text = "\n".join(sf.lines[o.node.lineno - 1 : o.node.end_lineno])
                    if not _HIDING_ATTR.search(text):
                        continue  # nothing in it could hide parameters from .parameters()
                    self.st.root_index += 1
                    self.st.ctx = (("root", self.st.root_index),)
                    self.st.nograd = None
                    self.st.cond = 0
                    self.st.root_start = self.st.steps
                    self.st.root_budget = self.st.budgets.function
                    self.st.shallow = True
                    try:
                        self.symbolic_instance(o, Site(scope.sf, o.node))
                    finally:
                        self.st.shallow = False

    def exec_block(self, stmts, env: dict | None) -> dict | None:
        # path entries an `if` leaves for the rest of its block (one arm returned or continued)
        # end with the block
        mark = len(self.st.path)
        try:
            for i, stmt in enumerate(stmts):
                if env is None:
                    return None
                if self.st.gaps.stopped:
                    self.st.gaps.rest(stmts, stmt, self.st.sf)
                    return env
                if type(stmt) is ast.If and (tail := flags.tail_split(self, stmts, i)) is not None:
                    # the rest of the block tests the flag again: it runs inside each arm
                    return self.exec_stmt(tail, env)
                env = self.exec_stmt(stmt, env)
            return env
        finally:
            del self.st.path[mark:]

    def exec_stmt(self, stmt, env: dict) -> dict | None:
        frame = self.st.stack[-1]
        # a module's straight-line code runs once: it costs no budget, so that thousands of
        # top-level statements do not starve the training loop after them
        if frame.func is not None or frame.loops:
            self.st.steps += 1
        self.st.ticks += 1
        if not self.st.ticks & TICK:
            self.st.gaps.check_time(self.st)
        handler = STATEMENTS.get(type(stmt))
        if handler is None:
            return env
        prev = self.st.cur_stmt
        self.st.cur_stmt = stmt
        try:
            return handler(self, stmt, env)
        except PathRaises:
            return None  # like a `raise`: the path ends here
        finally:
            self.st.cur_stmt = prev

    def defaults_of(self, fn: FuncObj):
        if fn.defaults is None:
            args = fn.node.args
            env = fn.def_env if fn.def_env is not None else {}
            saved = (self.st.sf, self.st.stack)
            self.st.sf = fn.scope.sf
            self.st.stack = self.st.stack + [
                Frame(None, fn.scope, fn.closure[1:] if fn.closure else (), None, frozenset())
            ]
            try:
                fn.defaults = (
                    [self.eval(d, env) for d in args.defaults],
                    [self.eval(d, env) if d is not None else None for d in args.kw_defaults],
                )
            finally:
                self.st.sf, self.st.stack = saved
        return fn.defaults

    def scope_of(self, path: str, dotted: str):
        if path not in self.st.scopes and self.st.loaded_lines > self.st.budgets.imported_lines:
            self.st.trace.incomplete = True  # enough of the project is loaded for one file
            self.st.gaps.import_cut(path)
            return None
        sf = self.st.program.load(path)
        if sf is None:
            return None
        if path not in self.st.scopes:
            self.st.loaded_lines += sf.source.count("\n")
        scope = self.module_scope(sf, dotted)
        self.exec_module(scope)
        return scope

    def force(self, v: V) -> V:
        """The value behind a lazily imported name (running its module now if needed)."""
        if self.st.no_force:
            return v
        out = []
        for o in v.objs:
            if not isinstance(o, LazyImport):
                continue
            if o.value is None:
                if o.forcing:
                    return UNKNOWN
                o.forcing = True
                saved = (self.st.sf, self.st.stack, self.st.ctx, self.st.nograd, self.st.cond, self.st.grad_known)
                try:
                    if o.attr is None:
                        o.value = self.scope_value(o.path, o.dotted)
                    else:
                        scope = self.scope_of(o.path, o.dotted)
                        val = self.lookup_global(scope.globals, o.attr) if scope is not None else None
                        if val is None:
                            sub = self.st.program.submodule(o.path, o.attr)
                            if sub is not None:
                                val = self.scope_value(sub, f"{o.dotted}.{o.attr}")
                        if val is not None and val.k & Kind.LAZY:
                            val = self.force(val)
                        o.value = val if val is not None else UNKNOWN
                finally:
                    self.st.sf, self.st.stack, self.st.ctx, self.st.nograd, self.st.cond, self.st.grad_known = saved
                    o.forcing = False
            out.append(o.value)
        return join_all(out) if out else UNKNOWN

    def scope_value(self, path: str, dotted: str) -> V:
        scope = self.scope_of(path, dotted)
        if scope is None:
            return V(Kind.MODREF, const=dotted)
        return V(Kind.MODREF, frozenset((scope,)), const=f"<project>.{dotted}")

    def eval(self, node, env) -> V:  # the hottest path: one table lookup, one call
        if node is None:
            return NONE
        handler = EXPRESSIONS.get(type(node))
        if handler is None:
            return UNKNOWN
        return handler(self, node, env)

    def lookup_global(self, g: dict, name: str, depth=0):
        """A module-level name, forcing lazy imports and following `from x import *`."""
        live = self.st.live_globals.get(id(g))
        v = live.get(name) if live is not None else None
        if v is None:
            v = g.get(name)
        if v is not None:
            if v.k & Kind.LAZY:
                v = g[name] = self.force(v)
            return v
        stars = g.get(STAR)
        if stars is None or depth > 8 or name.startswith("_"):
            return None
        if self.st.no_force:
            # an imported module's top level leaves imports alone: a name a module imported with
            # `import *` may define stays lazy, as `from m import name` would (a class's base,
            # `class LossCallback(Callback)` after `from .callback import *`, is forced when the
            # class is settled)
            for o in sorted(stars.objs, key=lambda x: x.oid):
                if isinstance(o, LazyImport) and self.st.program.may_define(o.path, name):
                    v = g[name] = V(Kind.LAZY, frozenset((LazyImport(o.path, o.dotted, name),)))
                    return v
            return None
        key = (id(g), name)
        if key in self.st.star_misses:
            return None
        for o in sorted(stars.objs, key=lambda x: x.oid):
            if not self.st.program.may_define(o.path, name):
                continue
            scope = self.scope_of(o.path, o.dotted)
            if scope is not None:
                v = self.lookup_global(scope.globals, name, depth + 1)
                if v is not None:
                    g[name] = v
                    return v
        self.st.star_misses.add(key)
        return None


def _optional_and_tested(fn_node) -> list[str]:
    """Positional parameters with the default None that the function tests against None or for
    truth (`if loss is not None:`, `if x:`, `x if x else y`), reads an attribute of (`args=None`,
    then `args.amp`: not given, the function raises there), or hands on under its own name to a
    call that may test it (`train_epoch(..., scaler=None)` calling `_train_inner_loop(...,
    scaler=scaler)`, which sets `use_amp = scaler is not None`)."""
    optional = set(_none_defaults(fn_node))
    if not optional:
        return []
    read = {
        n.value.id
        for n in ast.walk(fn_node)
        if isinstance(n, (ast.Attribute, ast.keyword))
        and isinstance(n.value, ast.Name)
        and n.value.id in optional
        and (isinstance(n, ast.Attribute) or n.arg == n.value.id)
    }
    return sorted(_tested(fn_node, optional, on_self=False) | read)


def _optional_tensors(fn_node) -> list[str]:
    """The optional-and-tested parameters the function uses as tensors: a tensor method called on
    them (`lens.unsqueeze(1)`), an operand of arithmetic or of a comparison other than `is`, or an
    argument of calls when nothing reads an attribute of them that no tensor has
    (`inference_params.seqlen_offset` is an option object's). Kept on the node: asked at every
    analysis that runs the unit (each keystroke in an editor)."""
    known = getattr(fn_node, "_ga_optional_tensors", None)
    if known is not None:
        return known
    fn_node._ga_optional_tensors = found = _find_optional_tensors(fn_node)
    return found


def _find_optional_tensors(fn_node) -> list[str]:
    names = set(_optional_and_tested(fn_node))
    if not names:
        return []
    tensor: set[str] = set()
    passed: set[str] = set()
    objects: set[str] = set()
    for n in ast.walk(fn_node):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in names:
            if n.attr in T.TENSORISH_METHODS or n.attr in T.METADATA_ATTRIBUTES or n.attr in T.VIEW_ATTRIBUTES:
                tensor.add(n.value.id)
            else:
                objects.add(n.value.id)
        elif isinstance(n, ast.BinOp):
            tensor.update(o.id for o in (n.left, n.right) if isinstance(o, ast.Name) and o.id in names)
        elif isinstance(n, ast.Compare) and not any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops):
            tensor.update(o.id for o in (n.left, *n.comparators) if isinstance(o, ast.Name) and o.id in names)
        elif isinstance(n, ast.Call):
            passed.update(a.id for a in n.args if isinstance(a, ast.Name) and a.id in names)
    return sorted((tensor | passed) - objects)


def _required_when_none(fn_node) -> list[str]:
    """Parameters with the default None that the function raises on when they are None (a
    detector's targets, required in training mode), in an `if` at the top of its body."""
    optional = set(_none_defaults(fn_node))
    out = set()
    for stmt in fn_node.body if optional else ():
        if isinstance(stmt, ast.If) and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise):
            for n in ast.walk(stmt.test):
                if (
                    isinstance(n, ast.Compare)
                    and isinstance(n.left, ast.Name)
                    and n.left.id in optional
                    and isinstance(n.ops[0], ast.Is)
                    and isinstance(n.comparators[0], ast.Constant)
                    and n.comparators[0].value is None
                ):
                    out.add(n.left.id)
    return sorted(out)


def _none_defaults(fn_node) -> list[str]:
    a = getattr(fn_node, "args", None)
    if a is None or not a.defaults:
        return []
    positional = a.posonlyargs + a.args
    return [
        p.arg
        for p, d in zip(positional[len(positional) - len(a.defaults) :], a.defaults)
        if isinstance(d, ast.Constant) and d.value is None
    ]


def _tested_on_self(cls_node, names) -> list[str]:
    """Of `names` (fields or __init__ parameters with the default None), those whose attribute of
    the same name a method of the class tests against None or for truth (`if self.clip is not None:`)."""
    return sorted(_tested(cls_node, set(names), on_self=True)) if names else []


def _tested(node, names: set[str], on_self: bool) -> set[str]:
    tested: set[str] = set()
    if not names:
        return tested
    for n in ast.walk(node):
        test = n.test if isinstance(n, (ast.If, ast.IfExp, ast.While)) else None
        if test is None:
            continue
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            test = test.left
        if on_self:
            if (
                isinstance(test, ast.Attribute)
                and isinstance(test.value, ast.Name)
                and test.value.id == "self"
                and test.attr in names
            ):
                tested.add(test.attr)
        elif isinstance(test, ast.Name) and test.id in names:
            tested.add(test.id)
    return tested

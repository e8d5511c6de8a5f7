"""The interpreter's run-time structures: module scopes and call frames (the budgets that bound a
run are `budget.Budgets`)."""

from __future__ import annotations

import itertools
import re

from ..source.prebuilt import dataclass
from ..source.program import SourceFile
from .values import V

_serials = itertools.count(1)


def mentions(sf: SourceFile, node, pattern: re.Pattern) -> bool:
    """`pattern` in the text of `node`; cached on the node, since the editor asks at every edit."""
    cache = getattr(node, "_gradaudit_mentions", None)
    if cache is None:
        cache = node._gradaudit_mentions = {}
    hit = cache.get(pattern)
    if hit is None:
        hit = cache[pattern] = bool(pattern.search("\n".join(sf.lines[node.lineno - 1 : node.end_lineno])))
    return hit


# what makes a function worth running on unknown arguments, and a loop worth its budget: a
# training step happens in it
TRAINING_WORDS = re.compile(r"\bbackward\(|autograd\.grad\(|\.step\(|zero_grad\(")
# a call that runs a training loop of the project (`att.train_student(epochs=1)`, `model.fit(x, y)`):
# what a pytest test of a training library does, its only driver in the repository. Not
# `model.train()`, which only sets the training mode (and is in most tests)
DRIVES_TRAINING = re.compile(r"\.(?:train_\w+|fit\w*|learn\w*)\(|(?<![.\w])train\(")


def pytest_module(path: str) -> bool:
    """A file pytest collects tests from (`test_*.py`, `*_test.py`)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def trains(sf: SourceFile, node) -> bool:
    """The text of `node` (a loop) calls backward, autograd.grad, step or zero_grad; cached on the
    node, since a loop is asked at each of its runs."""
    hit = getattr(node, "_gradaudit_trains", None)
    if hit is None:
        hit = bool(TRAINING_WORDS.search("\n".join(sf.lines[node.lineno - 1 : node.end_lineno])))
        node._gradaudit_trains = hit
    return hit


class PathRaises(Exception):
    """A statement that certainly raises at run time (torch refuses a non-leaf in an optimizer):
    nothing after it runs on this path."""


class ModuleScope:
    __slots__ = ("done", "globals", "name", "running", "sf")

    def __init__(self, sf: SourceFile, name: str):
        self.sf = sf
        self.globals: dict[str, V] = {}
        self.done = False
        self.running = False
        self.name = name


@dataclass(frozen=True, slots=True)
class Split:
    """What a name got on one side only of a flag the running function never assigns."""

    only_false: frozenset  # objects it got only when the flag is false
    only_true: frozenset  # only when it is true


class Frame:
    __slots__ = (
        "arg_objs",
        "assumed",
        "call_site",
        "closure",
        "cls",
        "cond",
        "func",
        "graph_reads",
        "guards",
        "label",
        "loops",
        "returns",
        "scope",
        "self_v",
        "serial",
        "splits",
        "yields",
    )

    def __init__(self, func, scope, closure, call_site, arg_objs, cls=None, self_v=None, label="", cond=0):
        self.func = func
        # the branch depth the call began at: a global the function sets at that depth is set
        # whenever the function runs (statements.bind_name)
        self.cond = cond
        self.scope = scope
        self.closure = closure
        self.returns: list[V] = []
        self.yields: list[V] = []
        self.call_site = call_site
        self.arg_objs = arg_objs
        self.loops: list[dict] = []
        self.cls = cls
        self.self_v = self_v
        self.label = label
        self.serial = next(_serials)  # names one call: a flag's literal (settings.py) is per call
        # name -> flag -> what it got on one side only (Split): from `a, b = f(...) if flag else
        # (x, y)` (statements.py), dropped when the name is rebound
        self.splits: dict[str, dict[str, Split]] = {}
        # flag path -> its truth in the arm being run (flags.py)
        # flag path -> its truth; "=" + path -> (allowed values or None, excluded values)
        self.assumed: dict[str, object] = {}
        # a test that side-effect-free code wrote twice in one iteration (`if opt.adv > 0 and
        # iter % opt.aiter == 0:` to make `outputs_adv`, and again to use it) -> (the context it ran
        # in, its line, name -> (the joined value, the true arm's, the false arm's)), the latest last
        self.guards: dict[str, tuple] = {}
        # name -> (its value once backward() ran on a part of it, those parts' source texts):
        # after `out["loss"].backward()`, `out["loss"]` read again is a tensor with a graph
        self.graph_reads: dict[str, tuple[V, frozenset[str]]] = {}

    def runs(self, name: str) -> bool:
        """A call of a class's method `name` (`forward`, `__init__`)."""
        return self.func is not None and self.cls is not None and getattr(self.func.node, "name", "") == name

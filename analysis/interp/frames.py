"""The interpreter's run-time structures: module scopes, call frames, and the budgets that bound
a run."""

from __future__ import annotations

import re

from ..source.program import SourceFile
from .values import V

MAX_DEPTH = 12
BUDGET = 15000  # statements per entry file; beyond it calls are not followed
ROOT_BUDGET = 5000  # statements for the module body's run (training scripts use a few hundred)
SYMBOLIC_BUDGET = 2000  # statements per other root (an uncalled function, one class checked alone)
INIT_BUDGET = 800  # statements for the __init__ of an object that is not a module
MODULE_INIT_BUDGET = 4000
MAX_LOADED_LINES = 80000  # lines of imported project modules run for one file

# what makes a function worth running on unknown arguments, and a loop worth its budget: a
# training step happens in it
TRAINING_WORDS = re.compile(r"\bbackward\(|autograd\.grad\(|\.step\(|zero_grad\(")


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


class Frame:
    __slots__ = (
        "arg_objs",
        "call_site",
        "closure",
        "cls",
        "func",
        "label",
        "loops",
        "returns",
        "scope",
        "self_v",
        "yields",
    )

    def __init__(self, func, scope, closure, call_site, arg_objs, cls=None, self_v=None, label=""):
        self.func = func
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

"""LR schedulers built by library functions: `get_linear_schedule_with_warmup(optimizer, ...)`.

Fine-tuning scripts rarely build torch's schedulers themselves: transformers and diffusers give
factories that return one (`LambdaLR`, or `ReduceLROnPlateau`) over the optimizer they are
given. Unknown, such a call hides the optimizer from the lifecycle rules: it takes the optimizer
and returns something whose `.step()` might do anything. Known, it is a torch scheduler over that
optimizer, and `scheduler.step()` before `optimizer.step()` is GA207 as with torch's own.

Read from the library's source when it is installed: a function each of whose `return`s builds a
`torch.optim.lr_scheduler` class over one of its own parameters. The table answers for the rest:
factories that pick their schedule from a name (`get_scheduler("linear", optimizer)`: one of the
source's returns is a dict lookup) and libraries that are not installed.
"""

from __future__ import annotations

import ast

from ..ops import torch_api as T
from ..source.prebuilt import dataclass

PLATEAU = "ReduceLROnPlateau"
UNKNOWN = ""  # a schedule picked by a name the engine cannot read


@dataclass(frozen=True)
class SchedulerFactory:
    position: int  # of the optimizer among the positional arguments
    keyword: str  # ... or its keyword
    cls: str  # the torch scheduler class it builds: LambdaLR, ReduceLROnPlateau, UNKNOWN (by name)
    how: str  # 'source' | 'table'
    by_name: bool = False  # get_scheduler(name, optimizer): the class follows the name

    def torch_class(self, args, kwargs) -> str:
        """The class for this call: a factory by name decides on a constant name."""
        if not self.by_name:
            return self.cls
        name = kwargs.get("name", args[0] if args else None)
        const = getattr(name, "const", None)
        if isinstance(const, str):
            # transformers' and diffusers' SchedulerType values: only this one is not a LambdaLR
            return PLATEAU if const == "reduce_lr_on_plateau" else "LambdaLR"
        return UNKNOWN


# Checked against transformers 5.24.0 (transformers/optimization.py) and diffusers 0.42.1
# (diffusers/optimization.py, re-exported by the package): `get_scheduler(name, optimizer, ...)`
# in both; the get_*_schedule* functions take the optimizer first and return a LambdaLR, except
# transformers' get_reduce_on_plateau_schedule. Asked only when the source is not there to read.
_BY_NAME = (
    "transformers.get_scheduler",
    "transformers.optimization.get_scheduler",
    "diffusers.optimization.get_scheduler",
    "diffusers.get_scheduler",
)
_FIRST_ARG = ("transformers.", "transformers.optimization.", "diffusers.", "diffusers.optimization.")


# pytorch_transformers 1.x and transformers 2.x (before the get_*_schedule functions): classes that
# are LambdaLR subclasses taking the optimizer first (checked in pytorch_transformers 1.2.0 and
# transformers 2.1.1, optimization.py, re-exported by each package)
_LAMBDA_CLASSES = (
    "ConstantLRSchedule",
    "WarmupConstantSchedule",
    "WarmupLinearSchedule",
    "WarmupCosineSchedule",
    "WarmupCosineWithHardRestartsSchedule",
)
_CLASS_PREFIXES = ("pytorch_transformers.", "pytorch_transformers.optimization.", *_FIRST_ARG[:2])


def table_factory(qual: str) -> SchedulerFactory | None:
    if qual in _BY_NAME:
        return SchedulerFactory(1, "optimizer", UNKNOWN, "table", by_name=True)
    if any(qual == p + c for p in _CLASS_PREFIXES for c in _LAMBDA_CLASSES):
        return SchedulerFactory(0, "optimizer", "LambdaLR", "table")
    for prefix in _FIRST_ARG:
        if qual.startswith(prefix):
            name = qual[len(prefix) :]
            if "." in name or not name.startswith("get_") or "schedule" not in name or name == "get_scheduler":
                continue
            return SchedulerFactory(0, "optimizer", PLATEAU if "plateau" in name else "LambdaLR", "table")
    return None


def source_factory(libs, qual: str) -> SchedulerFactory | None:
    """From the installed source: every return builds one torch scheduler class over the same
    parameter of the function."""
    defn = libs.define(qual)
    if defn is None or defn.kind != "function":
        return None
    b = libs.index.bindings(defn.path)
    node = b.node_of(defn.qual) if b is not None else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    found = set()
    for n in _returns(node):
        call = n.value
        if not isinstance(call, ast.Call):
            return None
        q = libs.index.resolve_expr(defn.path, call.func)
        q = T.strip_torch_alias(q) if q else None
        head, _, cls = (q or "").rpartition(".")
        if head != "torch.optim.lr_scheduler":
            return None
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "optimizer"), None)
        if not isinstance(first, ast.Name) or first.id not in params:
            return None
        found.add((params.index(first.id), first.id, cls))
    if len(found) != 1:
        return None
    ((position, keyword, cls),) = found
    return SchedulerFactory(position, keyword, cls, "source")


def _returns(fn):
    """The function's own returns (not those of functions defined inside it)."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return):
            yield n
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))

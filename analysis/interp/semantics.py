"""The semantics tables the interpreter dispatches through: what torch, library and framework
names and objects do.

The interpreter core (interpreter.py, statements.py, expressions.py, calls.py) knows Python. What
a call of `torch.nn.Linear`, `F.softmax` or `timm.create_model` does, what `.step()` does to an
optimizer or `.backward()` to a tensor, is a handler registered here by the layer that knows it
(torch/register.py, libraries/register.py). A handler receives the interpreter as its first
argument (`ip`, typed `Core` in core.py) and returns an abstract value, or None where it declines
and the next handler is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..source.prebuilt import dataclass, field

Handler = Callable[..., Any]


def _unset(*args: Any) -> Any:
    raise NotImplementedError("no semantics registered for this (libraries/register.py builds the tables)")


def _same(ip: Any, value: Any) -> Any:
    return value


def _nothing(*args: Any) -> None:
    return None


@dataclass(eq=False)
class CallTable:
    """Calls by qualified name (`torch.nn.functional.softmax`): exact names, module heads
    (`torch.nn.functional.*`) and predicates, asked in the order they were added. A handler is
    called as `handler(ip, qual, args, kwargs, node, env)`; one returning None passes the call on.
    Which handlers match a name is worked out once per name."""

    _entries: list[tuple[Callable[[str, str, str], bool], Handler]] = field(default_factory=list)
    _memo: dict[str, tuple[Handler, ...]] = field(default_factory=dict)

    def names(self, names: Iterable[str], handler: Handler) -> None:
        known = frozenset(names)
        self._add(lambda qual, head, short: qual in known, handler)

    def heads(self, heads: Iterable[str], handler: Handler) -> None:
        """Every name directly in one of these modules (`head.short`)."""
        known = frozenset(heads)
        self._add(lambda qual, head, short: head in known, handler)

    def when(self, predicate: Callable[[str, str, str], bool], handler: Handler) -> None:
        """Names for which `predicate(qual, head, short)` holds."""
        self._add(predicate, handler)

    def _add(self, predicate: Callable[[str, str, str], bool], handler: Handler) -> None:
        self._entries.append((predicate, handler))
        self._memo.clear()

    def handlers(self, qual: str) -> tuple[Handler, ...]:
        found = self._memo.get(qual)
        if found is None:
            head, _, short = qual.rpartition(".")
            found = self._memo[qual] = tuple(h for p, h in self._entries if p(qual, head, short))
        return found


@dataclass(eq=False)
class ObjectSemantics:
    """What a kind of heap object (a module, an optimizer, a scaler...) does when the program reads
    or sets its attributes, calls its methods, calls it, or reads or sets an item of it. Unset: the
    interpreter's generic treatment of an object it does not know."""

    attr: Handler | None = None  # (ip, obj, attr, node) -> V
    setattr: Handler | None = None  # (ip, obj, attr, value, stmt, target) -> None
    method: Handler | None = None  # (ip, obj, name, args, kwargs, node, env, recv) -> V
    call: Handler | None = None  # (ip, obj, args, kwargs, node, env) -> V
    getitem: Handler | None = None  # (ip, obj, index, node) -> V
    setitem: Handler | None = None  # (ip, obj, index, value, stmt, target, env) -> None


@dataclass(eq=False)
class TensorSemantics:
    """Tensors: values whose objects are tensor storages or parameter leaves."""

    attr: Handler  # (ip, recv, attr, node) -> V
    method: Handler  # (ip, recv, name, args, kwargs, node, env) -> V
    binop: Handler  # (ip, op, left, right, node) -> V, an operand being a tensor
    negate: Handler  # (ip, v, node) -> V
    getitem: Handler  # (ip, recv, key, node, index) -> V: `key` the index's constant (or "slice")
    inplace: Handler  # (ip, target, rhs, node, stmt, op, target_node=None) -> V
    set_requires_grad: Handler  # (ip, recv, flag, node, target_node, env, stmt) -> V


@dataclass(eq=False)
class ModuleExtension:
    """What a library or framework adds to nn.Module semantics (torch/modules.py asks them in order)."""

    attr: Handler | None = None  # (ip, m, attr, node) -> V | None
    forward: Handler | None = None  # (ip, m, args, kwargs, node) -> V | None
    method: Handler | None = None  # (ip, m, name, args, kwargs, node) -> V | None
    result: Handler | None = None  # (ip, m, out) -> V: the output of any forward of `m`


@dataclass(eq=False)
class Semantics:
    calls: CallTable
    tensors: TensorSemantics
    objects: dict[type, ObjectSemantics] = field(default_factory=dict)
    modules: list[ModuleExtension] = field(default_factory=list)
    # statements and values
    with_statement: Handler = _unset  # (ip, stmt, env) -> env | None
    store: Handler = _same  # (ip, value) -> V: a value stored while autocast regions run
    # classes and instances
    class_base: Handler = _nothing  # (ip, qual) -> "base" | "module" | None: a library base class
    after_init: Handler = _nothing  # (ip, module) -> None: a module's __init__ has run
    base_init: Handler = _nothing  # (ip, module, args, kwargs, node): `super().__init__(...)` reached torch
    # (ip, value) -> ModuleObj | None: what must be a module (an element of nn.Sequential(...)) made
    # by a call of a library the engine cannot read
    unseen_module: Handler = _nothing
    # (ip, args, kwargs, node) -> V | None: what a call of a callable the engine cannot follow
    # (`getattr(models, args.arch)(...)`) makes, when the code shows it is a model
    unknown_model: Handler = _nothing
    # (ip, name, node) -> V | None: a parameter annotated `nn.Module` (`model: torch.nn.Module`) of a
    # function run on unknown arguments: a module whose parameters the engine does not see
    annotated_module: Handler = _nothing
    # (ip, recv, name, args, kwargs, node) -> V | None: a method that gives back what it is given
    # (`accelerator.prepare(model, optimizer)`), asked of objects handed in (SymObj) as well
    wrapping: Handler = _nothing
    new_optimizer: Handler = _unset  # (ip, qual, args, kwargs, node, env) -> V: a torch.optim subclass
    new_scheduler: Handler = _unset  # (ip, qual, args, kwargs, node, env) -> V: a lr_scheduler subclass
    on_instance: list[Handler] = field(default_factory=list)  # (ip, cls, recv, args, kwargs) -> None
    instance_method: list[Handler] = field(default_factory=list)  # (ip, inst, name, args, kwargs, node) -> V|None
    unknown_method: list[Handler] = field(default_factory=list)  # (ip, recv, name, args, kwargs, node) -> V|None
    # (ip, recv, name, args, kwargs, node) -> V|None: a method of the project's objects gave a value
    # the engine does not know (a registry of the project's own, filled where the engine did not run)
    unknown_result: list[Handler] = field(default_factory=list)
    after_run: list[Handler] = field(default_factory=list)  # (ip, scope) -> None: the entry file has run
    # (ip, cls, attr, node) -> V|None: an attribute a project class inherits from a library base
    # (`MyFunction.apply` of a torch.autograd.Function)
    inherited_attr: list[Handler] = field(default_factory=list)

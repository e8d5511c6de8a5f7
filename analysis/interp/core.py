"""The interpreter's core services, as the protocol the semantics modules program against.

Torch, library and framework semantics (analysis/torch, analysis/libraries) are handlers the
interpreter calls by qualified name or by object type (semantics.py). A handler gets the
interpreter as `ip: Core` and may use only what is declared here: its state (`ip.st`), the
semantics tables (`ip.sem`), the library-summary mode (`ip.library`), and a few services:
evaluate, run a block, assign, iterate, call, make a tensor result, record an event.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, Protocol

from .objects import ClassObj, FuncObj, Site, SymObj, Unit
from .semantics import Semantics
from .state import InterpState, LibraryMode
from .trace import Event
from .values import Flow, Kind, V


class Core(Protocol):
    st: InterpState
    sem: Semantics
    library: LibraryMode | None  # summarising library code (libraries/models.py), else None

    # sequence numbers and places
    def seq(self) -> int: ...
    def site(self, node: ast.AST) -> Site: ...

    # evaluate and run
    def eval(self, node: ast.AST | None, env: dict) -> V: ...
    def exec_block(self, stmts: list, env: dict) -> dict | None: ...
    def assign(self, target: ast.AST, value: V, env: dict, stmt: Any) -> None: ...
    def iter_value(self, v: V) -> V: ...

    # call
    def call_value(self, fv: V, args: list, kwargs: dict, node: Any, env: dict | None) -> V: ...
    def call_function(self, fn: FuncObj, args: list, kwargs: dict, node: Any, self_v: V | None = None) -> V: ...
    def call_qualified(self, qual: str, args: list, kwargs: dict, node: Any, env: dict | None) -> V: ...
    def class_attr(self, cls: ClassObj, attr: str, self_v: V | None, node: Any) -> V: ...
    def opaque_call(
        self,
        fv: V | None,
        args: list,
        kwargs: dict,
        node: Any,
        extra: V | None = None,
        outside: bool = False,
        record: str | None = "call",
    ) -> V: ...

    # unknown values standing for what the engine cannot see
    def sym_value(self, name: str, site: Site) -> V: ...
    def sym_unit(self, o: SymObj) -> Unit: ...
    def symbolic_instance(self, cls: ClassObj, site: Site) -> V: ...
    def symbolic_args(
        self, fn: FuncObj, drop_first: bool, make: Callable[[str, Site], V], site: Site
    ) -> tuple[list, dict]: ...

    # make a tensor result, record an event
    def tensor_result(
        self,
        f: Flow,
        node: Any,
        op: str | None = None,
        inputs: tuple = (),
        alias: V | None = None,
        k: int = Kind.TENSOR,
        shape: tuple | None = None,
        reduced: bool = False,
        label: str | None = None,
    ) -> V: ...
    def event(self, kind: str, node: Any, obj: Any = None, detail: Any = None, units: Any = None) -> Event: ...


class Interp(Core, Protocol):
    """What the interpreter core's own modules (statements, expressions, calls...) use besides."""

    def get_attr(self, recv: V, attr: str, node: Any, env: dict | None) -> V: ...
    def set_attr(self, recv: V, attr: str, value: V, stmt: Any, target: Any, env: dict | None) -> None: ...
    def get_item(self, recv: V, index: V, node: Any, env: dict | None) -> V: ...
    def set_item(self, recv: V, index: V, value: V, stmt: Any, target: Any, env: dict | None) -> None: ...
    def call_method(self, recv: V, name: str, args: list, kwargs: dict, node: Any, env: dict | None) -> V: ...
    def name_objects(self, value: V, name: str) -> None: ...
    def force(self, v: V) -> V: ...
    def lookup_global(self, g: dict, name: str, depth: int = 0) -> V | None: ...
    def scope_value(self, path: str, dotted: str) -> V: ...
    def defaults_of(self, fn: FuncObj) -> tuple: ...

"""Project module classes that provably hold no parameters and no buffers, read from their text.

A class checked on its own (a unit run) builds its project submodules shallowly: what they hold is
not run, so each stands for unknown parameters. A submodule whose class can be read to hold nothing
(`moving_avg`: a kernel size and an `nn.AvgPool1d`) needs no such stand-in: a plain list of them
hides nothing from `parameters()` or `state_dict()`.

Proof is by reading every method of the class and of its project bases: nothing stored on `self`
may be anything but a parameter-free torch module, an instance of such a class (in turn), a plain
value or a tensor made without requires_grad; and no call may register state (`nn.Parameter`,
`register_buffer`, `add_module`, `setattr`) or build a module with parameters. Anything the reading
cannot resolve counts as state.
"""

from __future__ import annotations

import ast

from ..ops import torch_api as T
from .objects import ClassObj, LazyImport
from .values import Kind

# library heads whose functions return plain values (never modules)
_PLAIN_HEADS = ("math", "numpy", "builtins", "operator", "functools", "einops")
_TORCH_MODULE_BASES = frozenset(("torch.nn.Module", "torch.nn.modules.module.Module"))
_DEPTH = 6


def holds_no_state(cls: ClassObj) -> bool:
    """True when no instance of `cls` can hold a parameter or a buffer (cached on the class)."""
    return _free(cls, 0)


def _free(cls: ClassObj, depth: int) -> bool:
    if cls.stateless is not None:
        return cls.stateless
    cls.stateless = False  # recursion (a class holding itself) proves nothing
    out = depth < _DEPTH and _read(cls, depth)
    cls.stateless = out
    return out


def _read(cls: ClassObj, depth: int) -> bool:
    for c in cls.mro():
        for b in c.bases:
            if isinstance(b, str) and b not in _TORCH_MODULE_BASES:
                return False
        if c.class_attrs and any(_holds_module(v) for v in c.class_attrs.values()):
            return False
        for fn in c.methods.values():
            node = getattr(fn, "node", None)
            if node is None or not _method_free(c, node, depth):
                return False
    return True


def _holds_module(v) -> bool:
    return any(not isinstance(o, (str, int, float)) for o in getattr(v, "objs", ()))


def _method_free(cls: ClassObj, fn: ast.AST, depth: int) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = _last_name(node.func)
            if name in T.STATE_REGISTERS or any(k.arg == "requires_grad" for k in node.keywords):
                return False
            what = _resolve(cls, node.func)
            if isinstance(what, str) and what.startswith("torch.nn.") and not _free_torch_module(what):
                if what.rpartition(".")[2][:1].isupper():
                    return False
            if isinstance(what, ClassObj) and what.is_module and not _free(what, depth + 1):
                return False
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_on_self(t) for t in targets) and node.value is not None:
                if not _plain_value(cls, node.value, depth):
                    return False
    return True


def _plain_value(cls: ClassObj, value: ast.AST, depth: int) -> bool:
    """A value stored on `self` that is no state: every call in it is known to make none."""
    for node in ast.walk(value):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
            continue
        if not isinstance(node, ast.Call):
            continue
        what = _resolve(cls, node.func)
        if isinstance(what, ClassObj):
            if what.is_module and not _free(what, depth + 1):
                return False
            continue
        if not isinstance(what, str):
            return False  # a project function, a method, something unresolved: it may return a module
        head, _, short = what.rpartition(".")
        if what.startswith("torch.nn.") and short[:1].isupper():
            if not _free_torch_module(what):
                return False
            continue
        if what.startswith("torch.") and short[:1].islower():
            continue  # a tensor or a value (requires_grad was refused above)
        if not head and short in T.PLAIN_BUILTINS:
            continue
        if head.split(".")[0] not in _PLAIN_HEADS:
            return False
    return True


def _free_torch_module(qual: str) -> bool:
    return qual.rpartition(".")[2] in T.FREE_MODULES


def _on_self(target: ast.AST) -> bool:
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return isinstance(target, ast.Name) and target.id == "self"


def _last_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _resolve(cls: ClassObj, func: ast.AST):
    """What a call's callee names in the class's module: a qualified name (`torch.nn.AvgPool1d`,
    `math.sqrt`, `len`), a project ClassObj, or None (a method, a local, something not loaded)."""
    parts = []
    node = func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    globals_ = getattr(cls.scope, "globals", None)
    v = globals_.get(node.id) if isinstance(globals_, dict) else None
    if v is None:
        return node.id if not parts and node.id in T.PLAIN_BUILTINS else None
    const = getattr(v, "const", None)
    objs: frozenset = getattr(v, "objs", frozenset())
    for o in objs:
        if isinstance(o, LazyImport) and o.value is not None:
            v = o.value
            const, objs = getattr(v, "const", None), getattr(v, "objs", frozenset())
            break
    if getattr(v, "k", 0) & Kind.MODREF and isinstance(const, str) and not objs:
        return ".".join([const] + list(reversed(parts)))
    classes = [o for o in objs if isinstance(o, ClassObj)]
    if not parts and len(classes) == 1 and len(objs) == 1:
        return classes[0]
    return None

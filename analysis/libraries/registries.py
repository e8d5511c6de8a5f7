"""Registries: a model class picked by name from the classes a project registered.

detectron2, mmdetection and many research projects build their model with
`META_ARCH_REGISTRY.get(cfg.MODEL.META_ARCHITECTURE)(cfg)` or `MODELS.build(cfg)`, the registry
being a library object (fvcore's, mmengine's `Registry`) filled by class decorators
(`@META_ARCH_REGISTRY.register()`). The name comes from a configuration the engine cannot read,
and the registry is an object it cannot see, so the model used to be unknown and no step built on
it was understood.

Python fills a registry when the modules holding the decorated classes are imported; the engine
imports lazily, so the classes are found from the source instead: the files of the package that
makes the call whose text has `KEY.register`, and in them the classes decorated so. Then:

- one class registered: `get(...)` is that class, and the call builds it as any other;
- several, all `nn.Module` subclasses: the call builds one of them, which one the configuration
  says. It is a module whose parameters are not seen (one opaque leaf, as a library model whose
  structure is unseen): the optimizer built from it holds them, a forward of it reaches them;
- otherwise (a registry of datasets or of functions): nothing is said, as before.
"""

from __future__ import annotations

import ast
import os
import re
import weakref

from ..interp.core import Interp
from ..interp.objects import ClassObj, InstanceObj, Obj
from ..interp.semantics import ObjectSemantics
from ..interp.values import Kind, V
from ..source.program import read_text
from .semantics import materialize
from .shapes import LibModel

# files of a package read for a registry's classes, at most (a search of text, then a parse of
# the files that name the registry)
MAX_FILES = 3000
_SKIP = ("node_modules", "__pycache__", "site-packages", "tests", "test")


class RegistryPick(Obj):
    """`REGISTRY.get(name)` of a name the engine cannot read: one of the registered classes."""

    __slots__ = ("classes", "key")

    def __init__(self, key: str, classes: tuple):
        super().__init__()
        self.key = key
        self.classes = classes

    def __repr__(self):
        return f"RegistryPick({self.key})"


def registry_method(ip: Interp, recv: V, name, args, kwargs, node) -> V | None:
    """`KEY.get(name)`, `KEY.build(cfg)` on a registry object the engine cannot see (a library's), or
    on one of the project's whose method gave nothing known (filled by modules the engine did not run)."""
    if name not in ("get", "build") or ip.library is not None:
        return None
    if recv.objs and not all(isinstance(o, InstanceObj) for o in recv.objs):
        return None
    func = node.func if isinstance(node, ast.Call) else None
    key = _key(func.value) if isinstance(func, ast.Attribute) else None
    if key is None:
        return None
    classes = registered(ip, key)
    if not classes:
        return None
    if name == "get":
        if len(classes) == 1:
            return V(Kind.CLASS, frozenset(classes))
        return V(Kind.FUNC, frozenset((RegistryPick(key, tuple(classes)),)), site=node)
    pick = RegistryPick(key, tuple(classes))
    # `MODELS.build(cfg)`: the class named by the configuration, built from it
    return _build(ip, pick, args, kwargs, node)


def _call(ip: Interp, o: RegistryPick, args, kwargs, node, env) -> V:
    return _build(ip, o, args, kwargs, node)


def _build(ip: Interp, o: RegistryPick, args, kwargs, node) -> V:
    classes = [c for c in o.classes if isinstance(c, ClassObj)]
    if len(classes) == 1:
        return ip.call_value(V(Kind.CLASS, frozenset(classes)), list(args), dict(kwargs), node, None)
    if not classes or not all(c.is_module for c in classes):
        return ip.opaque_call(None, list(args), dict(kwargs), node)
    names = ", ".join(sorted({c.name for c in classes})[:4]) + (", ..." if len(classes) > 4 else "")
    lm = LibModel(
        f"{o.key}.get",
        f"{o.key}.get",
        "evidence",
        note=f"one of the {len(classes)} nn.Module classes registered in `{o.key}` ({names}), picked by configuration",
    )
    # the classes' own arguments (a configuration) are not modules: nothing of them is part of it
    return materialize(ip, lm, [], {}, node)


OBJECT_SEMANTICS = ObjectSemantics(call=_call)


def _key(expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def registered(ip: Interp, key: str) -> list:
    """The classes decorated `@KEY.register...` in the package of the file running now."""
    cache = ip.st.registries
    top = _package_top(ip.st.sf.abspath)
    hit = cache.get((top, key))
    if hit is not None:
        return hit
    # the package's files are looked at (stat) once per Program (a check run, an edit in the
    # editor), not once per analysis of each of its files
    checked = _CHECKED.setdefault(ip.st.program, {})
    index = checked.get(top)
    if index is None:
        index = checked[top] = _index(top)
    paths = index.get(key)
    if not paths:
        cache[(top, key)] = []
        return []
    cache[(top, key)] = []  # a registry consulted while its classes are being found: none yet
    found = []
    for path in paths:
        sf = ip.st.program.load(path)
        if sf is None or sf.tree is None:
            continue
        names = [
            n.name
            for n in sf.tree.body
            if isinstance(n, ast.ClassDef) and any(_registers(d, key) for d in n.decorator_list)
        ]
        if not names:
            continue
        scope = next(iter(ip.scope_value(path, _dotted(path, top)).objs), None)
        if scope is None:
            continue
        for n in names:
            v = ip.lookup_global(scope.globals, n)
            if v is not None:
                found.extend(v.of(ClassObj))
    cache[(top, key)] = found
    return found


# package folder -> ((path, mtime) of its folders and files, registry name -> files registering in it)
_INDEX: dict[str, tuple[tuple, dict]] = {}
# Program -> package folder -> its index, as checked against the files when that Program first asked
_CHECKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_DECORATOR = re.compile(r"^[ \t]*@[ \t]*(?:[\w.]+\.)?(\w+)\.register\w*\b", re.MULTILINE)


def _index(top: str) -> dict:
    """Which files of the package register classes in which registry, by the registry's name: read
    once per package (one search of each file's text), again when a file or folder changed."""
    held = _INDEX.get(top)
    if held is not None and all(_mtime(p) == m for p, m in held[0]):
        return held[1]
    stamps: list = []
    out: dict = {}
    for path in _files(top, stamps):
        try:
            text = read_text(path)
        except (OSError, ValueError):
            continue
        if ".register" not in text:
            continue
        for key in set(_DECORATOR.findall(text)):
            out.setdefault(key, []).append(path)
    _INDEX[top] = (tuple(stamps), out)
    return out


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _registers(dec, key: str) -> bool:
    """`@KEY.register()`, `@KEY.register_module(name=...)`, `@KEY.register`."""
    f = dec.func if isinstance(dec, ast.Call) else dec
    return isinstance(f, ast.Attribute) and f.attr.startswith("register") and _key(f.value) == key


def _package_top(path: str) -> str:
    """The outermost package holding `path` (its folder when it is in none)."""
    here = os.path.dirname(os.path.abspath(path))
    top = here
    while os.path.exists(os.path.join(top, "__init__.py")):
        parent = os.path.dirname(top)
        if parent == top or not os.path.exists(os.path.join(parent, "__init__.py")):
            break
        top = parent
    return top


def _files(top: str, stamps: list) -> list[str]:
    out: list[str] = []
    package = os.path.exists(os.path.join(top, "__init__.py"))
    for here, dirs, files in os.walk(top):
        stamps.append((here, _mtime(here)))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP) if package else []
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(here, f)
                stamps.append((path, _mtime(path)))
                out.append(path)
        if len(out) > MAX_FILES:
            return out[:MAX_FILES]
    return out


def _dotted(path: str, top: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(top) if os.path.exists(os.path.join(top, "__init__.py")) else top)
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)

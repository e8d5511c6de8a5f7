"""Dataclasses whose methods are written once, at build time, instead of at every import.

`dataclasses.dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` and
`__setattr__` as source text and compiles it when the module is imported; with `inspect`, which
it imports, that was most of gradaudit's start-up (about 340 of 530 million instructions to
import the engine). Here the same methods are generated into `_prebuilt.py` by

    python -m gradaudit.analysis.source.prebuilt          # rewrite _prebuilt.py
    python -m gradaudit.analysis.source.prebuilt --check  # exit 1 when it is out of date

from the classes' declarations (read with `ast`, never imported), and compiled to bytecode like
any module. The decorator below takes them from there; a class whose declaration changed since
(its fields, their defaults, the options) is built by `dataclasses` as before, so a stale file
costs start-up time, never correctness (tests/test_prebuilt.py keeps it fresh).

The subset supported is what the project uses: `frozen`, `slots`, `eq`, `kw_only`,
`field(default=, default_factory=, repr=, compare=, hash=)` and `__post_init__`; no inheritance
between dataclasses. `replace` works on both kinds; `dataclasses.fields` and `dataclasses.replace`
work too (the fields are described when first asked for).
"""

from __future__ import annotations

import ast
import os
import sys

from . import _prebuilt

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time, and nothing here needs it
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_kw):
        return lambda f: f


MISSING: Any = _prebuilt.MISSING
FrozenInstanceError = _prebuilt.FrozenInstanceError


class Field:
    """What `field(...)` declares about one field (the decorator reads it off the class body)."""

    __slots__ = ("compare", "default", "default_factory", "hash", "repr")

    def __init__(self, default, default_factory, repr, compare, hash):
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare
        self.hash = hash


def field(*, default: Any = MISSING, default_factory: Any = MISSING, repr=True, compare=True, hash=None) -> Any:
    return Field(default, default_factory, repr, compare, hash)


@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls=None, /, *, frozen=False, slots=False, eq=True, kw_only=False):
    def wrap(c):
        return _build(c, frozen, slots, eq, kw_only)

    return wrap if cls is None else wrap(cls)


def replace(obj: T, /, **changes) -> T:
    """A copy of a dataclass instance with some fields changed (`dataclasses.replace`)."""
    specs = getattr(type(obj), "__prebuilt_fields__", None)
    if specs is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    for name, *_ in specs:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return type(obj)(**changes)


# ---------------------------------------------------------------- building a class


def _specs(cls) -> list:
    """(name, kind, repr, compare, hash) per field, in declaration order; kind is '' (required),
    'd' (a default) or 'f' (a default factory)."""
    out = []
    ns = cls.__dict__
    for name, ann in ns.get("__annotations__", {}).items():
        if isinstance(ann, str) and ann.startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = ns.get(name, MISSING)
        if isinstance(value, Field):
            kind = "f" if value.default_factory is not MISSING else "d" if value.default is not MISSING else ""
            out.append((name, kind, value.repr, value.compare, value.hash))
        else:
            out.append((name, "" if value is MISSING else "d", True, True, None))
    return out


def signature(specs: list, frozen: bool, slots: bool, eq: bool, kw_only: bool, post_init: bool) -> tuple:
    return (bool(frozen), bool(slots), bool(eq), bool(kw_only), bool(post_init), tuple(specs))


def _build(cls, frozen, slots, eq, kw_only):
    specs = _specs(cls)
    ns = cls.__dict__
    key = f"{cls.__module__}.{cls.__qualname__}"
    made = _prebuilt.CLASSES.get(key)
    sig = signature(specs, frozen, slots, eq, kw_only, "__post_init__" in ns)
    if made is None or made[0] != sig:
        return _fallback(cls, specs, frozen, slots, eq, kw_only)
    defaults, factories = [], []
    for name, kind, *_ in specs:
        value = ns.get(name, MISSING)
        if kind == "d":
            defaults.append(value.default if isinstance(value, Field) else value)
        elif kind == "f":
            factories.append(value.default_factory)
    methods = made[1](tuple(defaults), tuple(factories))
    names = tuple(s[0] for s in specs)
    if slots:
        body = {k: v for k, v in ns.items() if k not in ("__dict__", "__weakref__") and k not in names}
        body["__slots__"] = names
        body["__qualname__"] = cls.__qualname__
        body.update(methods)
        cls = type(cls)(cls.__name__, cls.__bases__, body)
    else:
        for name, *_ in specs:
            value = ns.get(name, MISSING)
            if isinstance(value, Field):
                if value.default is not MISSING:
                    setattr(cls, name, value.default)
                else:
                    delattr(cls, name)
        for k, v in methods.items():
            setattr(cls, k, v)
    cls.__prebuilt_fields__ = tuple(specs)
    cls.__dataclass_fields__ = _DescribedFields()
    cls.__match_args__ = tuple(s[0] for s in specs) if not kw_only else ()  # type: ignore[misc]
    return cls


def _fallback(cls, specs, frozen, slots, eq, kw_only):
    """The generated methods do not match the declaration (or there are none): the standard
    library builds the class, as it did before."""
    import dataclasses

    ns = cls.__dict__
    for name, *_ in specs:
        value = ns.get(name, MISSING)
        if isinstance(value, Field):
            kw: dict = {"repr": value.repr, "compare": value.compare, "hash": value.hash}
            if value.default is not MISSING:
                kw["default"] = value.default
            if value.default_factory is not MISSING:
                kw["default_factory"] = value.default_factory
            setattr(cls, name, dataclasses.field(**kw))
    return dataclasses.dataclass(cls, frozen=frozen, slots=slots, eq=eq, kw_only=kw_only)


class _DescribedFields:
    """`__dataclass_fields__` for `dataclasses.fields` / `replace` / `is_dataclass`, made when
    first asked for (that imports dataclasses; the engine itself never asks)."""

    def __get__(self, obj, owner):
        import dataclasses

        out = {}
        for name, _kind, repr_, compare, hash_ in owner.__prebuilt_fields__:
            f = dataclasses.field(repr=repr_, compare=compare, hash=hash_)
            f.name = name
            f.type = owner.__dict__.get("__annotations__", {}).get(name, "Any")  # noqa: RUF063 (no inspect)
            f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            out[name] = f
        return out


# ---------------------------------------------------------------- the generator


_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))  # the checkout: analysis/, server/
PACKAGES = {"analysis": "gradaudit.analysis", "server": "gradaudit.server"}
SKIP = (os.path.join("analysis", "probe"),)  # imports nothing of gradaudit: stays on dataclasses
OUT = os.path.join(_HERE, "_prebuilt.py")


def declarations() -> list:
    """(module, qualname, signature, field specs) of every class decorated with this module's
    `dataclass`, read from the sources."""
    found = []
    for top, dotted in PACKAGES.items():
        base = os.path.join(_ROOT, top)
        for dirpath, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            if any(os.path.relpath(dirpath, _ROOT).startswith(s) for s in SKIP):
                continue
            for f in sorted(files):
                if not f.endswith(".py") or f == "_prebuilt.py":
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                module = dotted if rel == "__init__" else f"{dotted}.{rel.removesuffix('.__init__')}"
                with open(path, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read(), path)
                if not _imports_decorator(tree):
                    continue
                found.extend(_classes(tree.body, module, "", path))
    return found


def _imports_decorator(tree) -> bool:
    return any(
        isinstance(n, ast.ImportFrom)
        and (n.module or "").endswith("prebuilt")
        and any(a.name == "dataclass" for a in n.names)
        for n in tree.body
    )


def _classes(body, module, prefix, path) -> list:
    out = []
    for node in body:
        if not isinstance(node, ast.ClassDef):
            continue
        qual = f"{prefix}{node.name}"
        for dec in node.decorator_list:
            opts = _options(dec)
            if opts is not None:
                specs = _declared_fields(node, path)
                post = any(isinstance(s, ast.FunctionDef) and s.name == "__post_init__" for s in node.body)
                out.append((module, qual, signature(specs, *opts, post), specs))  # type: ignore[call-arg]
        out.extend(_classes(node.body, module, f"{qual}.", path))
    return out


def _options(dec):
    """(frozen, slots, eq, kw_only) of a `@dataclass` / `@dataclass(...)` decorator, else None."""
    if isinstance(dec, ast.Name) and dec.id == "dataclass":
        return (False, False, True, False)
    if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id == "dataclass":
        kw = {k.arg: ast.literal_eval(k.value) for k in dec.keywords}
        return (kw.get("frozen", False), kw.get("slots", False), kw.get("eq", True), kw.get("kw_only", False))
    return None


def _declared_fields(node, path) -> list:
    out = []
    for s in node.body:
        if not (isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)):
            continue
        if ast.unparse(s.annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        name, v = s.target.id, s.value
        if v is None:
            out.append((name, "", True, True, None))
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "field":
            kw = {k.arg: k.value for k in v.keywords}
            lit = {k: ast.literal_eval(x) for k, x in kw.items() if k in ("repr", "compare", "hash")}
            kind = "f" if "default_factory" in kw else "d" if "default" in kw else ""
            out.append((name, kind, lit.get("repr", True), lit.get("compare", True), lit.get("hash")))
        else:
            out.append((name, "d", True, True, None))
    return out


def _factory_name(key: str) -> str:
    return "_" + key.removeprefix("gradaudit.").replace(".", "_")


def _methods(key, sig, specs) -> list[str]:
    """The source of one class's factory: it takes the defaults and factories and returns the methods."""
    frozen, slots, eq, kw_only, post_init, _ = sig
    lines = [f"def {_factory_name(key)}(_d, _f):"]
    params, body = [], []
    di = fi = 0
    for name, kind, *_ in specs:
        if kind == "d":
            params.append(f"{name}=_d[{di}]")
            di += 1
        elif kind == "f":
            params.append(f"{name}=MISSING")
        else:
            params.append(name)
    star = ["*"] if kw_only and params else []
    lines.append(f"    def __init__({', '.join(['self', *star, *params])}):")
    for name, kind, *_ in specs:
        value = name
        if kind == "f":
            body.append(f"        if {name} is MISSING:")
            body.append(f"            {name} = _f[{fi}]()")
            fi += 1
        body.append(f"        _set(self, {name!r}, {value})" if frozen else f"        self.{name} = {value}")
    if post_init:
        body.append("        self.__post_init__()")
    lines.extend(body or ["        pass"])
    shown = [s[0] for s in specs if s[2]]
    inner = ", ".join(f"{n}={{self.{n}!r}}" for n in shown)
    lines.append("    def __repr__(self):")
    lines.append(f'        return f"{{self.__class__.__qualname__}}({inner})"')
    methods = ["__init__", "__repr__"]
    if eq:
        cmp = [s[0] for s in specs if s[3]]
        mine = "".join(f"self.{n}," for n in cmp)
        theirs = "".join(f"other.{n}," for n in cmp)
        lines.append("    def __eq__(self, other):")
        lines.append("        if other.__class__ is self.__class__:")
        lines.append(f"            return ({mine}) == ({theirs})")
        lines.append("        return NotImplemented")
        methods.append("__eq__")
        if frozen:
            hashed = [s[0] for s in specs if (s[4] if s[4] is not None else s[3])]
            lines.append("    def __hash__(self):")
            lines.append(f"        return hash(({''.join(f'self.{n},' for n in hashed)}))")
        methods.append("__hash__")
    if frozen:
        lines.append("    def __setattr__(self, name, value):")
        lines.append('        raise FrozenInstanceError(f"cannot assign to field {name!r}")')
        lines.append("    def __delattr__(self, name):")
        lines.append('        raise FrozenInstanceError(f"cannot delete field {name!r}")')
        methods += ["__setattr__", "__delattr__"]
        if slots:
            names = [s[0] for s in specs]
            lines.append("    def __getstate__(self):")
            lines.append(f"        return [{', '.join(f'self.{n}' for n in names)}]")
            lines.append("    def __setstate__(self, state):")
            lines.append(f"        for name, value in zip({tuple(names)!r}, state):")
            lines.append("            _set(self, name, value)")
            methods += ["__getstate__", "__setstate__"]
    entries = ", ".join(f"{m!r}: {m}" if m != "__hash__" or frozen else "'__hash__': None" for m in methods)
    lines.append(f"    return {{{entries}}}")
    return lines


HEADER = '''"""Generated by `python -m gradaudit.analysis.source.prebuilt`: do not edit.

The methods `dataclasses` would write for each dataclass of the project, as source, so that they
are compiled once (into this module's bytecode) instead of at every start (see prebuilt.py).
"""

# ruff: noqa

_set = object.__setattr__


class _Missing:
    __slots__ = ()

    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


class FrozenInstanceError(AttributeError):
    pass
'''


def generate() -> str:
    out = [HEADER]
    table = []
    for module, qual, sig, specs in declarations():
        out.append("")
        out.append("")
        key = f"{module}.{qual}"
        out.extend(_methods(key, sig, specs))
        table.append(f"    {key!r}: ({sig!r}, {_factory_name(key)}),")
    out.append("")
    out.append("")
    out.append("CLASSES = {")
    out.extend(table)
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = generate()
    with open(OUT, encoding="utf-8") as fh:
        current = fh.read()
    if "--check" in argv:
        if current != text:
            print(f"{OUT} is out of date: run python -m gradaudit.analysis.source.prebuilt", file=sys.stderr)
            return 1
        return 0
    if current != text:
        with open(OUT, "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Dataclasses with build-time methods (analysis/source/prebuilt.py): the generated file is fresh,
every project dataclass uses it, and the methods behave as the standard library's do."""

from __future__ import annotations

import ast
import copy
import dataclasses
import importlib
import pickle
import sys
import types

import pytest

from gradaudit.analysis.source import _prebuilt, prebuilt


def test_generated_file_is_fresh():
    assert prebuilt.main(["--check"]) == 0, "run: python -m gradaudit.analysis.source.prebuilt"


@pytest.mark.parametrize("module,qual", [(m, q) for m, q, _, _ in prebuilt.declarations()])
def test_every_dataclass_uses_generated_methods(module, qual):
    obj = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    assert getattr(obj, "__prebuilt_fields__", None) is not None, f"{module}.{qual} was built by dataclasses"


SOURCE = """
from gradaudit.analysis.source.prebuilt import dataclass, field

@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0
    tags: tuple = field(default_factory=tuple)
    note: str = field(default="", compare=False, repr=False)

@dataclass(frozen=True)
class Loose:
    a: int
    b: list = field(default_factory=list, hash=False)

@dataclass(kw_only=True, frozen=True)
class Named:
    code: str
    level: int = 1

    def __post_init__(self):
        object.__setattr__(self, "level", self.level * 10)

@dataclass(eq=False)
class Mutable:
    items: list = field(default_factory=list)
    count: int = 0

@dataclass
class Plain:
    a: int
    b: str = "b"
"""


def _module(name: str, source: str) -> dict:
    """Run `source` as the module `name` (dataclasses looks the module up for string annotations)."""
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)
    return mod.__dict__


def _both():
    """Each test class twice: with the generated methods, and as the standard library builds it."""
    tree = ast.parse(SOURCE)
    decls = prebuilt._classes(tree.body, "test_prebuilt_mod", "", "<test>")
    gen = "\n".join(["from gradaudit.analysis.source._prebuilt import MISSING, FrozenInstanceError, _set"])
    table = {}
    for module, qual, sig, specs in decls:
        key = f"{module}.{qual}"
        gen += "\n" + "\n".join(prebuilt._methods(key, sig, specs)) + "\n"
        table[key] = (sig, prebuilt._factory_name(key))
    ns: dict = {}
    exec(compile(gen, "<generated>", "exec"), ns)
    saved = dict(_prebuilt.CLASSES)
    _prebuilt.CLASSES.update({k: (sig, ns[name]) for k, (sig, name) in table.items()})
    try:
        fast = _module("test_prebuilt_mod", SOURCE)
    finally:
        _prebuilt.CLASSES.clear()
        _prebuilt.CLASSES.update(saved)
    std = _module("test_prebuilt_std", SOURCE.replace("gradaudit.analysis.source.prebuilt", "dataclasses"))
    return fast, std


FAST, STD = _both()


def test_classes_are_built_from_generated_methods():
    for name in ("Point", "Loose", "Named", "Mutable", "Plain"):
        assert FAST[name].__prebuilt_fields__
        assert "__prebuilt_fields__" not in STD[name].__dict__


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("Point", (1,), {}),
        ("Point", (1, 2, ("a",)), {"note": "n"}),
        ("Loose", (3,), {}),
        ("Named", (), {"code": "GA101"}),
        ("Named", (), {"code": "GA101", "level": 2}),
        ("Mutable", (), {}),
        ("Plain", (4,), {"b": "x"}),
    ],
)
def test_same_behaviour_as_dataclasses(name, args, kwargs):
    f, s = FAST[name](*args, **kwargs), STD[name](*args, **kwargs)
    assert repr(f).replace("test_prebuilt_mod", "") == repr(s).replace("test_prebuilt_std", "")
    assert [getattr(f, n) for n, *_ in FAST[name].__prebuilt_fields__] == [
        getattr(s, x.name) for x in dataclasses.fields(s)
    ]
    assert (f == FAST[name](*args, **kwargs)) == (s == STD[name](*args, **kwargs))
    assert (f == s) is False  # another class
    if STD[name].__hash__ is None:
        assert FAST[name].__hash__ is None
    elif "__hash__" in STD[name].__dict__:
        assert hash(f) == hash(FAST[name](*args, **kwargs))
    params = STD[name].__dataclass_params__
    if params.frozen:
        with pytest.raises(AttributeError):
            f.x = 5  # type: ignore[attr-defined]
        with pytest.raises(AttributeError):
            del f.x  # type: ignore[attr-defined]
    assert hasattr(f, "__dict__") == hasattr(s, "__dict__")


def test_defaults_are_not_shared_and_compare_flags_hold():
    a, b = FAST["Mutable"](), FAST["Mutable"]()
    a.items.append(1)
    assert b.items == []
    assert a != b or a is b  # eq=False: identity
    p, q = FAST["Point"](1, note="x"), FAST["Point"](1, note="y")
    assert p == q and hash(p) == hash(q)  # note: compare=False
    assert FAST["Loose"](1, [1]) == FAST["Loose"](1, [1])
    assert hash(FAST["Loose"](1, [1])) == hash(FAST["Loose"](1, [2]))  # b: hash=False


def test_pickle_copy_and_replace():
    p = FAST["Point"](1, 2, ("t",), note="n")
    for other in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert other == p and other.note == "n"
    r = prebuilt.replace(p, y=7)
    assert (r.x, r.y, r.tags, r.note) == (1, 7, ("t",), "n")
    assert dataclasses.replace(p, x=3).x == 3  # the standard library's replace and fields work too
    assert [f.name for f in dataclasses.fields(p)] == ["x", "y", "tags", "note"]
    n = FAST["Named"](code="A")
    assert n.level == 10 and prebuilt.replace(n, code="B").code == "B"
    with pytest.raises(TypeError):
        FAST["Named"]("A")  # keyword-only
    m = pickle.loads(pickle.dumps(FAST["Loose"](1, [2])))
    assert m.b == [2]


def test_a_stale_declaration_falls_back_to_dataclasses():
    ns = _module(
        "test_prebuilt_stale",
        "from gradaudit.analysis.source.prebuilt import dataclass\n"
        "@dataclass(frozen=True)\nclass Fresh:\n    a: int\n    b: int = 2\n",
    )
    fresh = ns["Fresh"]
    assert "__prebuilt_fields__" not in fresh.__dict__
    assert dataclasses.is_dataclass(fresh) and fresh(1) == fresh(1, 2)

"""Summaries of library model classes: their registered structure and what their forward reads.

A `Shape` is what the engine keeps of a library `nn.Module` class after interpreting its
`__init__` and `forward` once, on symbolic arguments, with the same interpreter as user code
(see library_models.Summarizer): the submodules and parameters it registers, the parts it could
not see, and which parameters its output certainly (or maybe) carries gradient from. Shapes are
plain data, cached on disk as JSON.
"""

from __future__ import annotations

from typing import Any

from ..source.prebuilt import dataclass, field

OPAQUE_KEY = "<params>"


@dataclass(frozen=True)
class Shape:
    type: str  # class name: 'BertForSequenceClassification', 'Linear'
    qual: str = ""  # canonical dotted name ('torch.nn.Linear' for torch modules)
    spec: str = ""  # torch.nn short name when the engine has a table for it
    inplace: bool = False
    params: tuple = ()  # (name, frozen) of its own parameters
    children: tuple = ()  # (name, Shape) of its registered submodules, in order
    aliases: tuple = ()  # (name, path): a child or parameter that is another one, shared
    opaque: bool = False  # may own parameters the summary does not list
    maybe: tuple = ()  # attributes holding values of unknown kind (may be modules)
    repeated: bool = False  # built in a loop whose length was not known: more alike may exist
    forward: tuple | None = None  # unit paths its output certainly carries gradient from (None: unknown)
    forward_weak: tuple = ()  # unit paths it may carry gradient from
    methods: tuple = ()  # (name, MethodEffect) of structural methods (reset_classifier ...)
    source: tuple = ()  # (path, line) of the class definition
    ties: tuple = ()  # (path, path): parameters tied by the library (_tied_weights_keys)

    def to_json(self) -> dict:
        d: dict[str, Any] = {"type": self.type}
        for k in ("qual", "spec", "inplace", "opaque", "repeated"):
            v = getattr(self, k)
            if v:
                d[k] = v
        if self.params:
            d["params"] = [list(p) for p in self.params]
        if self.children:
            d["children"] = [[n, c.to_json()] for n, c in self.children]
        if self.aliases:
            d["aliases"] = [list(a) for a in self.aliases]
        if self.maybe:
            d["maybe"] = list(self.maybe)
        if self.forward is not None:
            d["forward"] = list(self.forward)
        if self.forward_weak:
            d["forward_weak"] = list(self.forward_weak)
        if self.methods:
            d["methods"] = [[n, e.to_json()] for n, e in self.methods]
        if self.source:
            d["source"] = list(self.source)
        if self.ties:
            d["ties"] = [list(t) for t in self.ties]
        return d

    @staticmethod
    def from_json(d: dict) -> Shape:
        return Shape(
            type=d.get("type", "module"),
            qual=d.get("qual", ""),
            spec=d.get("spec", ""),
            inplace=bool(d.get("inplace")),
            params=tuple((p[0], bool(p[1])) for p in d.get("params", ())),
            children=tuple((n, Shape.from_json(c)) for n, c in d.get("children", ())),
            aliases=tuple((a[0], a[1]) for a in d.get("aliases", ())),
            opaque=bool(d.get("opaque")),
            maybe=tuple(d.get("maybe", ())),
            repeated=bool(d.get("repeated")),
            forward=tuple(d["forward"]) if "forward" in d else None,
            forward_weak=tuple(d.get("forward_weak", ())),
            methods=tuple((n, MethodEffect.from_json(e)) for n, e in d.get("methods", ())),
            source=tuple(d.get("source", ())),
            ties=tuple((t[0], t[1]) for t in d.get("ties", ())),
        )

    def method(self, name: str):
        for n, e in self.methods:
            if n == name:
                return e
        return None

    def count(self) -> int:
        return len(self.params) + sum(c.count() for _, c in self.children)


@dataclass(frozen=True)
class MethodEffect:
    """What a structural method does to the module: the children it replaces with new ones, and the
    child it returns (get_classifier)."""

    replaces: tuple = ()  # (path, Shape) of children set anew
    returns: str | None = None  # path of the child it returns ('' is the module itself)
    unknown: bool = False  # it did more than the engine could follow

    def to_json(self) -> dict:
        d: dict = {}
        if self.replaces:
            d["replaces"] = [[p, s.to_json()] for p, s in self.replaces]
        if self.returns is not None:
            d["returns"] = self.returns
        if self.unknown:
            d["unknown"] = True
        return d

    @staticmethod
    def from_json(d: dict) -> MethodEffect:
        return MethodEffect(
            tuple((p, Shape.from_json(s)) for p, s in d.get("replaces", ())), d.get("returns"), bool(d.get("unknown"))
        )


@dataclass(frozen=True)
class LibModel:
    """What a library name called in user code gives: a module, and how the engine knows it."""

    qual: str  # as written: 'transformers.BertForSequenceClassification'
    canonical: str  # where it is defined
    how: str  # 'source' | 'table' | 'evidence'
    shape: Shape | None = None  # None: a module whose structure is unseen
    note: str = ""  # the table fact or the reason, for explanations
    source: tuple = ()  # (path, line)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

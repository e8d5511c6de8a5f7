"""Heap objects of the abstract interpreter: modules, parameter leaves, optimizers, containers.

They are mutable on purpose: a training script mutates them too (a head replaced after the
optimizer was built, a backbone frozen, a group added), and the interpreter replays those
mutations in program order. Everything the rules read is snapshotted into records.
"""

from __future__ import annotations

import itertools
from typing import Any

from .values import CONTAINERS, EMPTY, FROZEN, MAYBE, TRAINABLE, Kind, V, join, join_many

_ids = itertools.count(1)


def next_oid() -> int:
    """An id larger than every object's made so far, smaller than every later one's."""
    return next(_ids)


class Made:
    """How many objects holding training state (modules, parameter leaves, optimizers, schedulers,
    scalers) and graph nodes (trace.SaveRec) have been made: a call that made none, and recorded
    nothing, may stand for the same call made again (summaries.py)."""

    stateful = 0


def new_analysis_ids() -> None:
    """Number the objects of the analysis about to start from the next multiple of 2**20: an
    object's id is its hash, and a set of objects iterates by hash modulo its table size, so the
    sets an analysis makes iterate alike whatever ran before it in the process (other files of a
    batch, earlier versions in the editor)."""
    global _ids
    _ids = itertools.count(((next(_ids) >> 20) + 1) << 20)


# objects made while summarising a library (libraries/models.py) take their ids from a range of
# their own: an analysis then numbers its objects, and so orders the sets of them it iterates, the
# same whether a library's summary is computed on the way or read from the cache
_SUMMARY_IDS = itertools.count(1 << 48)


class summary_ids:
    """`with summary_ids():` makes the objects made inside take ids from the summaries' range."""

    def __enter__(self):
        global _ids
        self._saved, _ids = _ids, _SUMMARY_IDS

    def __exit__(self, *exc):
        global _ids
        _ids = self._saved


__all__ = ["FROZEN", "MAYBE", "TRAINABLE"]  # re-exported: the states live in values.py


def merge_state(a: int, b: int) -> int:
    return a if a == b else MAYBE


def in_order(objs) -> list:
    """The objects of a value in the order they were made: a frozenset's order follows their
    hashes, which follow how many objects the process made before (another file's analysis), and
    the interpreter must visit a joined receiver's objects in the same order every time."""
    return sorted(objs, key=_order_key) if len(objs) > 1 else list(objs)


def _order_key(o) -> int:
    return getattr(o, "oid", 0)


class Obj:
    __slots__ = ("oid",)

    def __init__(self):
        self.oid = next(_ids)

    def __hash__(self):
        return self.oid

    def __eq__(self, other):
        return self is other


class Site:
    """A source location: a node of one parsed file."""

    __slots__ = ("mod", "node")

    def __init__(self, mod, node):
        self.mod = mod
        self.node = node

    def __hash__(self):
        return id(self.node)

    def __eq__(self, other):
        return isinstance(other, Site) and other.node is self.node

    @property
    def line(self) -> int:
        return self.node.lineno

    def __repr__(self):
        return f"{self.mod.path}:{self.node.lineno}"


class Unit(Obj):
    """One parameter leaf (an nn.Parameter, a leaf tensor with requires_grad) or, for modules the
    engine cannot see into, an opaque stand-in for all of their parameters."""

    __slots__ = (
        "arg",
        "attr",
        "bumps",
        "computed",
        "count",
        "created_in_loop",
        "data",
        "frozen",
        "in_init",
        "kind",
        "label",
        "owner",
        "seq",
        "site",
        "source_cuts",
        "unreg",
        "version",
    )

    # param: nn.Parameter or a module's weight; leaf: a tensor made with requires_grad=True;
    # input: data given requires_grad_() (an adversarial example, a saliency input), not a weight;
    # fresh: requires_grad set on a value computed from cut parameters (GA106); opaque: unseen ones
    PARAM, LEAF, INPUT, FRESH, OPAQUE = "param", "leaf", "input", "fresh", "opaque"

    def __init__(self, kind, label, site, seq, owner=None, attr=None, count=1):
        super().__init__()
        Made.stateful += 1
        self.kind = kind
        self.owner = owner
        self.attr = attr
        self.label = label
        self.site = site
        self.seq = seq
        self.frozen = TRAINABLE
        self.count = count
        self.version = 0
        # (version after, Site, condition path, the storages the changed value may have been: one of
        # them changed) of in-place changes
        self.bumps = []
        self.unreg = None  # UnregRec when held by a plain container of a module
        self.source_cuts = EMPTY  # GA106: what cut the value this fresh leaf was made from
        self.computed = False
        self.created_in_loop = False
        self.in_init = False
        self.arg = False  # opaque: the parameters of a function's argument, made before the call
        self.data = False  # leaf: made from data that is no literal (`torch.tensor(feats, requires_grad=True)`)

    @property
    def name(self) -> str:
        if self.owner is not None and self.attr is not None:
            return f"{self.owner.path()}.{self.attr}"
        return self.label

    @property
    def module_path(self) -> str:
        if self.owner is not None:
            return self.owner.path()
        return self.label

    def __repr__(self):
        return f"Unit({self.name})"


class TensorObj(Obj):
    """Storage of a computed or data tensor: identity for aliasing and in-place version counts."""

    __slots__ = (
        "base",
        "bumps",
        "compared",
        "counts",
        "gate",
        "groups",
        "nan_rows",
        "nonleaf_of",
        "retained",
        "row_gate",
        "site",
        "version",
    )

    def __init__(self, site):
        super().__init__()
        self.site = site
        self.version = 0
        self.bumps = []
        self.base = None  # the parameter a `.data` view stands for
        self.retained = False  # retain_grad() was called: its .grad is kept
        self.compared = EMPTY  # a comparison's result: the storages it compared (`energy > 0`)
        self.nonleaf_of = None  # the requires_grad leaf this tensor was made from by one op (GA113)
        # `torch.where(mask, x, 0)` and what sums it: gradient reaches x only where these storages
        # (the mask) hold; `counts`: a sum of these storages (`mask.sum()`, the count of the mask)
        self.gate = EMPTY
        self.counts = EMPTY
        # per-group rows: `arange(n).repeat_interleave(c)` indexes the groups whose count in c is
        # not 0 (`groups`: c's storages); a scatter by such an index into a tensor carrying no
        # gradient passes gradient back only from those groups' rows (`row_gate`); a division of it
        # by c is NaN only in the rows of empty groups (`nan_rows`: (c's storages, the division
        # hazards)), which `repeat_interleave(c)` drops
        self.groups = EMPTY
        self.row_gate = EMPTY
        self.nan_rows: tuple[frozenset, frozenset] | None = None

    def __repr__(self):
        return f"Tensor@{self.site!r}"


class Children(dict):
    """A module's registered children. Any change to any module's children (or opaque unit) moves
    `epoch` on, so a module's parameters and submodules, walked once, are reused until the
    structure changes: on real code a joined receiver (`for m in model.modules(): m.f()`) asked
    every module of a large network for them, each a walk of its subtree."""

    __slots__ = ()
    epoch = 0

    def __setitem__(self, key, value):
        Children.epoch += 1
        super().__setitem__(key, value)

    def __delitem__(self, key):
        Children.epoch += 1
        super().__delitem__(key)

    def pop(self, *args):
        Children.epoch += 1
        return super().pop(*args)

    def popitem(self):
        Children.epoch += 1
        return super().popitem()

    def setdefault(self, key, default=None):
        Children.epoch += 1
        return super().setdefault(key, default)

    def update(self, *args, **kwargs):
        Children.epoch += 1
        super().update(*args, **kwargs)

    def clear(self):
        Children.epoch += 1
        super().clear()


class ModuleObj(Obj):
    __slots__ = (
        "_opaque_unit",
        "_submodules",
        "_submodules_at",
        "_unit_set",
        "_unit_set_at",
        "_units",
        "_units_at",
        "admitted",
        "alternatives",
        "arms",
        "attrs",
        "children",
        "cls",
        "copy_of",
        "dense_rows",
        "dims",
        "in_init",
        "inplace",
        "key",
        "label",
        "lib",
        "loaded_from",
        "opaque",
        "parent",
        "qual",
        "seq",
        "site",
        "spec",
        "summary",
        "training",
        "unordered",
        "unregs",
    )

    def __init__(self, label, site, seq, cls=None, qual=None):
        super().__init__()
        Made.stateful += 1
        self.cls = cls  # ClassObj of a user-defined module
        self.qual = qual  # 'torch.nn.Linear' for a torch module
        self.label = label
        self.parent = None
        self.key = None
        self.children = Children()  # registered submodules and parameters, in order
        # attributes set to a module on each arm of a branch (`if ...: self.attn = A() else: self.attn =
        # B()`): their slots `attr`, `attr<1>`... are all what the attribute may hold (torch/modules.py)
        self.arms: set[str] | None = None
        self.attrs = {}  # other attributes (plain values, unregistered containers)
        self.site = site
        self.seq = seq
        self.opaque = False  # may own parameters the engine cannot see
        self._opaque_unit = None
        self._units: tuple = ()
        self._units_at = -1
        self._unit_set: frozenset = frozenset()
        self._unit_set_at = -1
        self._submodules: tuple = ()
        self._submodules_at = -1
        self.inplace = False
        self.spec = None
        self.copy_of = None
        # every row it outputs is dense, though it adds no bias: an nn.Embedding with no padding row
        # (random rows, none of them the zero vector); see Mark.DENSE
        self.dense_rows = False
        self.unregs = []
        self.in_init = False
        self.loaded_from = False  # load_state_dict from an optimized module (a target network)
        self.training = True  # .train()/.eval() state: True, False, or None when paths disagree
        self.lib: Any = None  # libraries.semantics.LibInfo of a model from an installed library
        self.dims = None  # constructor constants that fix output shapes: (in, out), a reduction
        self.unordered = False  # a Sequential whose children's order is not known
        # an unordered Sequential whose possible chains are known: per chain (one per list it may
        # be made of), per position, the modules that may sit there
        self.alternatives: tuple[tuple[tuple[ModuleObj, ...], ...], ...] | None = None
        # its children stand for layers a comprehension made (`[Block() for _ in range(n)]`, run
        # once): how many there are is not known, only what each is like
        self.summary = False
        # a submodule from another project file that a class checked on its own holds directly:
        # built and run there, one level deep (interp/calls.py, `_admitted`)
        self.admitted = False

    def path(self) -> str:
        if self.parent is not None and self.key is not None:
            seen = 0
            node, parts = self, []
            while node.parent is not None and node.key is not None and seen < 32:
                parts.append(node.key)
                node = node.parent
                seen += 1
            return ".".join([node.label] + list(reversed(parts)))
        return self.label

    def type_name(self) -> str:
        if self.cls is not None:
            return self.cls.name
        if self.qual:
            return self.qual.rsplit(".", 1)[-1]
        return "module"

    @property
    def opaque_unit(self):
        return self._opaque_unit

    @opaque_unit.setter
    def opaque_unit(self, unit):
        Children.epoch += 1
        self._opaque_unit = unit

    def units(self, seen=None) -> list:
        """Registered parameters, depth first, shared ones once (like Module.parameters())."""
        if seen is not None:
            return self._walk_units(seen)
        if self._units_at != Children.epoch:
            self._units, self._units_at = tuple(self._walk_units(set())), Children.epoch
        return list(self._units)

    def unit_set(self) -> frozenset:
        """`frozenset(self.units())`, kept until the structure changes."""
        if self._unit_set_at != Children.epoch:
            self._unit_set, self._unit_set_at = frozenset(self.units()), Children.epoch
        return self._unit_set

    def _walk_units(self, visited: set) -> list:
        out = []
        stack = [self]
        while stack:
            m = stack.pop()
            if m.oid in visited:
                continue
            visited.add(m.oid)
            if m._opaque_unit is not None:
                out.append(m._opaque_unit)
            for child in reversed(list(m.children.values())):
                if isinstance(child, Unit):
                    if child.oid not in visited:
                        visited.add(child.oid)
                        out.append(child)
                elif isinstance(child, ModuleObj):
                    stack.append(child)
        return out

    def submodules(self) -> list:
        if self._submodules_at != Children.epoch:
            out, stack, seen = [], [self], set()
            while stack:
                m = stack.pop()
                if m.oid in seen:
                    continue
                seen.add(m.oid)
                out.append(m)
                stack.extend(c for c in m.children.values() if isinstance(c, ModuleObj))
            self._submodules, self._submodules_at = tuple(out), Children.epoch
        return list(self._submodules)

    def register(self, key, child):
        old = self.children.get(key)
        self.children[key] = child
        self.attrs.pop(key, None)
        # The first registration names the object (like `model.encoder.0.weight`).
        if isinstance(child, ModuleObj):
            if child.parent is None and child is not self and not self._descends_from(child):
                child.parent, child.key = self, key
        elif isinstance(child, Unit) and child.owner is None:
            child.owner, child.attr = self, key
        return old

    def _descends_from(self, other) -> bool:
        """`other` is an ancestor of this module (naming it our child would make a cycle)."""
        node, hops = self.parent, 0
        while node is not None and hops < 64:
            if node is other:
                return True
            node, hops = node.parent, hops + 1
        return False

    def __repr__(self):
        return f"Module({self.path()}:{self.type_name()})"


class Group:
    """One optimizer param group as it was built."""

    __slots__ = ("exact", "filtered", "from_arg", "options", "site", "sources", "units")

    def __init__(self, units, exact, filtered, site, options=(), sources=EMPTY, from_arg=False):
        self.units = units  # frozenset[Unit]
        self.exact = exact  # False: an unknown subset or superset
        self.filtered = filtered  # built with a requires_grad filter
        self.site = site
        self.options = options
        self.sources = sources  # modules whose .parameters() it came from
        self.from_arg = from_arg  # the collection was passed in by a caller


class OptimObj(Obj):
    __slots__ = (
        "anchor",
        "args_only",
        "assumed",
        "complete",
        "ctx",
        "duck",
        "escaped",
        "groups",
        "label",
        "qual",
        "seq",
        "site",
        "stateless",
    )

    def __init__(self, qual, label, site, seq, ctx):
        super().__init__()
        Made.stateful += 1
        self.qual = qual
        self.label = label
        self.site = site
        self.seq = seq
        self.groups = []
        self.complete = True
        # not complete only because some groups hold the parameters of the running function's
        # arguments (made before the call, so not anew in a loop of it)
        self.args_only = True
        self.ctx = ctx
        self.anchor = site
        self.escaped = False  # handed to code the engine does not see (it may step or clear it)
        self.stateless = False  # keeps no state between steps (plain SGD): rebuilding it loses nothing
        self.duck = False  # an unknown value taken for an optimizer (interp/ducks.py)
        # why it is taken for one like torch's without its own step() read ('' when it is torch's or
        # one the engine models): a library's class known by its name, a project class overriding step()
        self.assumed = ""

    def units(self) -> frozenset:
        out = set()
        for g in self.groups:
            out |= g.units
        return frozenset(out)

    def type_name(self) -> str:
        return self.qual.rsplit(".", 1)[-1] if self.qual else "optimizer"

    def __repr__(self):
        return f"Optim({self.label})"


class SchedObj(Obj):
    __slots__ = ("counter", "label", "optimizer", "qual", "seq", "site")

    def __init__(self, qual, label, site, seq, optimizer=None, counter=True):
        super().__init__()
        Made.stateful += 1
        self.qual, self.label, self.site, self.seq, self.optimizer = qual, label, site, seq, optimizer
        self.counter = counter  # the schedule depends on how many steps it has taken

    def __repr__(self):
        return f"Sched({self.label})"


class ScalerObj(Obj):
    __slots__ = ("disabled", "label", "qual", "seq", "site")

    def __init__(self, qual, label, site, seq):
        super().__init__()
        Made.stateful += 1
        self.qual, self.label, self.site, self.seq = qual, label, site, seq
        self.disabled = False  # `GradScaler(enabled=False)`: scale() gives the loss back, step() just steps

    def __repr__(self):
        return f"Scaler({self.label})"


class ListObj(Obj):
    """A list, set or generator; elements are joined into one value, and the first ones are also
    kept in order (`nn.Sequential(*layers)` needs the order to name its children)."""

    __slots__ = ("content", "elems", "exact", "positions", "site")

    MAX_ELEMS = 256

    def __init__(self, content=None, site=None):
        super().__init__()
        self.content = content
        self.site = site
        self.positions: dict | None = None  # (index, storage) -> the storage read at that index
        self.elems: list | None = [content] if content is not None else []
        # `elems` is the list, element by element in place: a literal, then only appended to (no
        # insert, pop or `lst[i] = v`), so `f(*lst)` can bind each element to its own parameter
        self.exact = False

    def add(self, v: V):
        self.content = join(self.content, v)
        if self.elems is not None:
            self.elems.append(v)
            if len(self.elems) > self.MAX_ELEMS:
                self.elems = None

    def extend(self, values: list[V]):
        """`add` of each value in turn, joined in one pass (a data literal of thousands of elements)."""
        self.content = join_many(self.content, values)
        if self.elems is not None:
            self.elems.extend(values)
            if len(self.elems) > self.MAX_ELEMS:
                self.elems = None

    def content_value(self):
        return (self.content,) if self.content is not None else ()

    def __repr__(self):
        return f"List#{self.oid}"


class DictObj(Obj):
    __slots__ = ("default", "keys", "modules_of", "rest", "site", "state_of")

    def __init__(self, site=None):
        super().__init__()
        self.keys = {}  # known constant keys -> value
        self.rest = None  # values under unknown keys
        self.default = None  # a defaultdict's factory (`defaultdict(list)`): what a missing key makes
        self.site = site
        self.state_of = None  # the module whose `state_dict()` this is
        self.modules_of = None  # the module whose `_modules` this is: a store registers a child

    def set(self, key, v: V):
        if key is None:
            self.rest = join(self.rest, v)
        else:
            self.keys[key] = v

    def get(self, key) -> V | None:
        if key is not None and key in self.keys:
            return self.keys[key]
        vals = list(self.keys.values())
        if self.rest is not None:
            vals.append(self.rest)
        out = None
        for x in vals:
            out = join(out, x)
        return out

    def values(self):
        out = list(self.keys.values())
        if self.rest is not None:
            out.append(self.rest)
        return out

    def content_value(self):
        return self.values()

    def __repr__(self):
        return f"Dict#{self.oid}"


CONTAINERS.update((ListObj, DictObj))  # what values.Flow looks into


class InstanceObj(Obj):
    __slots__ = ("attrs", "cls", "label", "site", "store")

    def __init__(self, cls, label, site):
        super().__init__()
        self.cls = cls
        self.attrs = {}
        self.label = label
        self.site = site
        # the dict an instance of a subclass of dict, defaultdict, OrderedDict or Counter is: its
        # items (`self[k]`, `.items()`), not its attributes
        self.store: DictObj | None = None

    def items_for(self, dunder: str):
        """What `self[k]` / iteration / a dict method acts on: the items of a dict-based instance
        whose class does not define `dunder` itself, else the instance."""
        if self.store is not None and self.cls.lookup(dunder) is None:
            return self.store
        return self

    def __repr__(self):
        return f"Instance({self.cls.name})"


class FuncObj(Obj):
    __slots__ = (
        "closure",
        "cls",
        "def_env",
        "defaults",
        "entry",
        "grad_on",
        "interpreted",
        "is_classmethod",
        "is_static",
        "node",
        "nograd",
        "qual",
        "scope",
    )

    def __init__(self, node, scope, closure, qual, cls=None):
        super().__init__()
        self.node = node
        self.scope = scope  # ModuleScope of the defining file
        self.closure = closure  # enclosing frames' environments (innermost first)
        self.qual = qual
        self.nograd = None  # Site of a @torch.no_grad()/@inference_mode() decorator
        # @torch.enable_grad() / @set_grad_enabled(True): True, its body records a graph even when
        # called under no_grad; @set_grad_enabled(flag) with a flag not known: None; else False
        self.grad_on: bool | None = False
        self.cls = cls
        self.is_static = False
        self.is_classmethod = False
        # a @contextlib.contextmanager function: its body up to the `yield`, as a function that
        # returns what is yielded (run when a `with` enters it); None for any other function
        self.entry: FuncObj | None = None
        self.interpreted = 0
        self.defaults = None
        self.def_env = None

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")

    def __repr__(self):
        return f"Func({self.qual})"


class BoundMethod(Obj):
    __slots__ = ("func", "recv")

    def __init__(self, func, recv):
        super().__init__()
        self.func = func
        self.recv = recv

    def __repr__(self):
        return f"Bound({self.func.qual})"


class PartialObj(Obj):
    """`functools.partial(f, *args, **kwargs)`: calling it calls `f` with those arguments first
    (a loss registered as `partial(F.huber_loss, reduction="none")` keeps its reduction)."""

    __slots__ = ("args", "fn", "kwargs")

    def __init__(self, fn, args, kwargs):
        super().__init__()
        self.fn = fn
        self.args = tuple(args)
        self.kwargs = dict(kwargs)

    def __repr__(self):
        return "Partial"


class _SettledByBases:
    """A ClassObj attribute that is only known once the class's bases are resolved: reading it
    resolves them (once); writing it stores the value in the slot `_NAME`."""

    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        obj._ensure()
        return getattr(obj, self.slot)

    def __set__(self, obj, value):
        setattr(obj, self.slot, value)


class ClassObj(Obj):
    """A class defined in the project. What its bases make it (a module, an optimizer...) is
    settled on first need: a base imported from a module not run yet stays unforced until then."""

    __slots__ = (
        "_is_module",
        "_is_optimizer",
        "_is_scheduler",
        "_opaque_base",
        "base_values",
        "bases",
        "class_attrs",
        "instantiated",
        "methods",
        "name",
        "node",
        "resolved",
        "resolver",
        "scope",
        "stateless",
        "sym_assumed",
        "sym_instance",
    )

    def __init__(self, node, scope, name):
        super().__init__()
        self.node = node
        self.scope = scope
        self.name = name
        # stateless.py's answer: it depends on the bases and the module's other names, so it is kept
        # here (one analysis), not on the class's node (reused by the next version of an edited file)
        self.stateless: bool | None = None
        self.bases = []  # ClassObj or qualified names of imported bases
        self.methods = {}
        self.class_attrs = {}
        self.sym_instance = None
        self.sym_assumed: tuple[str, ...] = ()  # what the symbolic instance rests on (annotations)
        self.instantiated = 0
        self.base_values = []  # the bases as evaluated at the class statement
        self.resolver = None  # the interpreter's hook that settles them
        self.resolved = False
        self._is_module = False
        self._opaque_base = False  # derives from a class the engine cannot see
        self._is_optimizer = False
        self._is_scheduler = False  # derives from a torch.optim.lr_scheduler class

    def _ensure(self):
        if not self.resolved:
            self.resolved = True
            if self.resolver is not None:
                self.resolver(self)

    # what the bases make the class: read through _ensure(), so the bases are settled first
    is_module = _SettledByBases()
    opaque_base = _SettledByBases()
    is_optimizer = _SettledByBases()
    is_scheduler = _SettledByBases()

    def mro(self):
        out, stack, seen = [], [self], set()
        while stack:
            c = stack.pop(0)
            if c.oid in seen:
                continue
            seen.add(c.oid)
            c._ensure()
            out.append(c)
            stack.extend(b for b in c.bases if isinstance(b, ClassObj))
        return out

    def lookup(self, name):
        for c in self.mro():
            if name in c.methods:
                return c.methods[name]
        return None

    def lookup_attr(self, name):
        for c in self.mro():
            if name in c.class_attrs:
                return c.class_attrs[name]
        return None

    def __repr__(self):
        return f"Class({self.name})"


class SymObj(Obj):
    """A value the engine does not know: a root function's parameter or an unresolvable import."""

    __slots__ = ("attrs", "label", "optim", "scaler", "seq", "site", "unit")

    def __init__(self, label, site=None, seq=0):
        super().__init__()
        self.label = label
        self.unit = None
        self.optim = None  # the optimizer it is taken for (interp/ducks.py)
        self.scaler = None  # the GradScaler it is taken for (interp/ducks.py)
        self.attrs = {}
        self.site = site
        self.seq = seq

    def __repr__(self):
        return f"Sym({self.label})"


class PIter(Obj):
    """What `.parameters()` and friends yield: a set of parameter leaves."""

    __slots__ = ("exact", "filtered", "named", "site", "sources", "units")

    def __init__(self, units, exact=True, sources=EMPTY, filtered=False, named=False, site=None):
        super().__init__()
        self.units = units
        self.exact = exact
        self.sources = sources
        self.filtered = filtered
        self.named = named
        self.site = site

    def __repr__(self):
        return f"PIter({len(self.units)})"


class GenCtxObj(Obj):
    """The context manager a call of a project's @contextmanager function gives: its body runs up
    to the `yield` when a `with` enters it (`with lora(r=8): model = LLaMA(config)` swaps a layer
    class there), not at the call."""

    __slots__ = ("args", "entry", "kwargs", "self_v", "site")

    def __init__(self, entry, args, kwargs, self_v, site):
        super().__init__()
        self.entry = entry
        self.args = args
        self.kwargs = kwargs
        self.self_v = self_v
        self.site = site


class CtxObj(Obj):
    """A context manager: torch.no_grad(), autocast(...), or unknown."""

    __slots__ = ("detail", "enabled", "kind", "site")

    def __init__(self, kind, site, detail=None, enabled=None):
        super().__init__()
        self.kind = kind  # 'nograd' | 'grad' | 'autocast' | 'other'
        self.site = site
        self.detail = detail
        self.enabled = enabled  # autocast(enabled=...) when a constant

    def __repr__(self):
        return f"Ctx({self.kind})"


class LazyImport(Obj):
    """`from pkg.mod import name`: the module runs only when the name is first used."""

    __slots__ = ("attr", "dotted", "forcing", "path", "value")

    def __init__(self, path, dotted, attr):
        super().__init__()
        self.path = path
        self.dotted = dotted
        self.attr = attr  # None: the module itself
        self.value = None
        self.forcing = False


class SuperObj(Obj):
    __slots__ = ("cls", "recv")

    def __init__(self, cls, recv):
        super().__init__()
        self.cls = cls
        self.recv = recv


def module_value(m: ModuleObj) -> V:
    return V(Kind.MODULE, frozenset((m,)))


def unit_value(u: Unit, site=None) -> V:
    return V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)), site=site)


# the objects of a value that are tensors: computed storages and parameter leaves
STORAGE = (TensorObj, Unit)


def storages(v: V) -> list:
    """The tensor storages and parameter leaves a value may refer to."""
    return [o for o in v.objs if isinstance(o, STORAGE)]


def is_closed(u: Unit) -> bool:
    """An opaque leaf standing for a library model's unseen parameters (libraries/semantics.py)."""
    o = u.owner
    return u.kind == Unit.OPAQUE and o is not None and getattr(o, "lib", None) is not None


def freezable(u: Unit) -> bool:
    return u.kind != Unit.OPAQUE or is_closed(u)

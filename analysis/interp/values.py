"""Abstract values: what the interpreter knows about one Python expression.

A value is a bag of facts that joins by union, so branches and loops merge without
special cases:

- ``k``: the kinds the value may have (tensor, module, optimizer, ...), a bit mask;
- ``objs``: heap objects it may refer to (modules, parameter leaves, optimizers, lists...);
- ``org``: parameter leaves whose gradient it certainly carries (when it is computed);
- ``weak``: leaves it may carry, seen only through calls the engine could not follow;
- ``top``: it may carry gradient from anything (an unknown origin);
- ``cuts``: places upstream where gradient was dropped, with what each dropped;
- ``saves``: tensors that differentiable ops upstream saved for backward (GA110);
- ``grads``: leaves whose ``.grad`` was read into it (manual updates, GA111);
- ``items``: exact elements of a tuple; ``const``: a known Python constant;
- ``site``: the expression that produced it (the loss location in a report);
- ``unk``: part of it comes from something the engine did not see (a call into outside code, a
  container filled where the engine did not look, a symbolic argument). It is not evidence of
  gradient (that is ``top``), but it forbids proofs of absence ("the loss reaches nothing");
- ``facts``: properties that hold on every path (see ``Fact``); they join by intersection;
- ``terms``: loss terms (trace.LossRec) whose gradient it carries, to tell which computed losses
  reach a ``backward()`` (GA209);
- ``shape``: the tensor's shape as far as constants in the code fix it (see shapes.py), or None;
- ``marks``: properties that hold on some path (see ``Mark``); they join by union;
- ``risks``: numerical hazards upstream (trace.RiskRec): NaN and inf flow with every value.

Three kinds of "don't know" follow from these: a value known to carry gradient from named
leaves (``org``/``weak``), one known to carry none (no ``org``/``weak``/``top``, no ``unk``), and
an unknown one (``unk``); rules may be confirmed only through the first two.
"""

from __future__ import annotations

import zlib
from typing import overload

EMPTY: frozenset = frozenset()

# requires_grad states of a parameter leaf (objects.Unit.frozen)
TRAINABLE, FROZEN, MAYBE = 0, 1, 2


class Kind:
    TENSOR = 1
    ARRAY = 2  # numpy.ndarray
    NUMBER = 4  # Python int/float/bool
    STR = 8
    NONE = 16
    MODULE = 32  # nn.Module instance
    PARAMS = 64  # iterator over parameters
    OPTIM = 128
    SCHED = 256
    SCALER = 512
    FUNC = 1024
    CLASS = 2048
    LIST = 4096
    DICT = 8192
    TUPLE = 16384
    MODREF = 32768  # a Python module or a dotted name inside one (torch.nn.functional.relu)
    INST = 65536  # instance of a user class that is not a module
    CTX = 131072  # a context manager such as torch.no_grad()
    UNKNOWN = 262144
    LAZY = 524288  # a name imported from a project module not executed yet


class Fact:
    """Bits of ``V.facts``: what holds on every path to a value."""

    NOGRAD = 1  # a tensor that certainly does not require grad (made under no_grad, detached...)
    UNREDUCED = 2  # a per-sample loss (reduction='none') not reduced since: backward() needs gradient=
    POSITIVE = 4  # certainly > 0 (`x + eps` of a non-negative x, `clamp_min(eps)`, `exp`): safe to log or divide by
    NONZERO = 8  # certainly not all zeros (an identity matrix): its norm is > 0
    # a softmax probability / a sigmoid output on every path (Mark.PROB / Mark.SIGM: on some path);
    # GA407 and GA408 are proven only then (a forward that applies a sigmoid for some config
    # entries and not others may hand the loss logits)
    ALL_PROB = 16
    ALL_SIGM = 32
    # a float64 tensor (`.double()`, `.to(torch.float64)`): a sigmoid or softmax of it reaches exactly
    # 0 or 1 only past |x| ~ 37..745, where float32 does at ~17..104; F32: made float32 (or narrower)
    # by hand, where the default dtype is float64
    F64 = 64
    F32 = 128
    # exactly 0 only where ReLU outputs are 0, through views, pooling, sums, squares and scalings by
    # a number: a NaN gradient made at such a 0 (the root of a sum of squares) reaches the ReLU,
    # whose backward selects 0 where its input was not positive; no parameter gets the NaN. Joined
    # with a dense value (Mark.DENSE, zero only on a null set of weights) it still holds: on each
    # path a root's infinite gradient is either stopped or never met
    MASKED_ZERO = 256
    # certainly >= 0 (|x|, x ** 2, a norm, a product or sum of such values): its log is -inf at
    # worst, never NaN, and `1 - x` of it is no probability's complement
    NONNEG = 512
    # the NaN entries of the data replaced or dropped (`torch.where(torch.isnan(y), 0, y)`,
    # `y.nan_to_num()`, `y[~torch.isnan(y)]`), and views of it: no NaN comes in through it
    NAN_FREE = 1024


class Mark:
    """Bits of ``V.marks``: what holds on some path to a value."""

    SCALED = 1  # divided by a count or scaled by a constant (`loss / accum_steps`)
    # numerical facts (numerics.py)
    PROB = 2  # a softmax probability: exactly 0 once exp underflows
    SIGM = 4  # a sigmoid output: exactly 0 or 1 once it saturates
    ZERO = 8  # >= 0 and exactly 0 for some inputs (relu, norm, std, a mask or its sum)
    LOGITS = 16  # raw activations (linear outputs): unbounded, exp of them overflows
    EXP = 32  # exp of raw activations (a latent overflow, see numerics)
    LOG1PEXP = 64  # 1 + exp(raw activations)
    CAUSAL = 128  # a mask built with triu/tril: every row keeps at least one key
    SELF = 256  # a difference of a tensor with (a view or rows of) itself: zero where they meet
    # drawn from a distribution (`dist.sample()`, `torch.multinomial`), and what is computed or stored
    # from it: as an index, it picks a category whose probability was > 0 when it was drawn
    SAMPLED = 512
    RANGE = 1024  # positions 0, 1, ..., n - 1 (`torch.arange`): `positions < lengths` keeps a first one per row
    ZMASK = 2048  # > 0 exactly where what it compared is (near) 0 (`(p == 0) * eps`): added to p, the sum is > 0
    UNIT = 4096  # within [-1, 1] (cosine similarity, tanh): a sigmoid of it stays well inside (0, 1)
    SQUARES = 8192  # squares of one tensor's own elements (`x * x`, `x ** 2`), or their sum: a root of it is a norm
    # a torch.distributions object (`Categorical(probs)`): its `.sample()` is drawn without a graph
    DIST = 16384
    # backward() ran on it: a tensor with a graph even when the engine could not see it made
    # (backward() raises otherwise); HOLDS_GRAPH: backward() ran on a value read out of it
    # (`out["loss"].backward()`), a dict or an object that holds such a tensor
    GRAPH = 32768
    HOLDS_GRAPH = 65536
    # a torch.nn.utils.rnn.PackedSequence: its `.data` is the packed tensor with its graph
    PACKED = 131072
    # the output of an affine map that adds a learned bias (nn.Linear, a convolution, a norm layer's
    # affine), and views, scalings, sums and squares of it: as a function of continuous weights, a
    # row of it is the zero vector (or constant) only on a set of measure zero, so its norm or std
    # is not a value that "can be exactly 0" (a ReLU feature through a bias-free layer can be)
    DENSE = 262144
    # the reciprocal of an exp of raw activations or of their sum (`1.0 / exp(k).cumsum(1)`): what a
    # hand-written normalisation multiplies by (an exp-weighted sum times it is a manual softmax)
    INV_EXP = 524288
    # one of several distinct tensors, which one not known: read from a dict or list under a key the
    # engine could not follow (`h[node_id]` over a DAG's node states). An op that saves it saved one
    # of them, not each: that proves no save of any one (GA110)
    ONE_OF = 1048576
    # a layer's output as it is: views, pools, means, negations, and scalings and shifts by a number
    # of it (`-log(critic(x))`, `log(critic(x) + eps)` when the sigmoid is missing). An op combining
    # it with another tensor (a ratio of two similarities, a mixture of densities) makes a value the
    # code derived, whose range the code may well know
    RAW = 2097152
    # rows the data picked (`torch.nonzero(x)`, `x[mask]` by masked_select): how many is not known
    # and may be none, so their number is a count that can be 0
    PICKED = 4194304
    # the inverse indices of `torch.unique(x, return_inverse=True)`: every value 0 .. n - 1 occurs,
    # so a count of them per value (`bincount`) is >= 1
    COVERS = 8388608
    # rows of unit norm (`F.normalize(x)`): a product of two such is a cosine similarity (UNIT)
    UNIT_ROWS = 16777216
    # a tensor the code combined, by + or -, from one that carries gradient and one that carries none
    # (a prediction minus its target), and views, sums and scalings of it: a NaN in the data (a
    # missing label) is NaN here, and an op after it that reads its input in backward (a square, a
    # norm) turns a zero gradient there into NaN (GA405: NaN dropped afterwards)
    DATA_MIX = 33554432
    # a mask that is true where a value is NaN or infinite (`torch.isnan(x)`), or its negation
    NAN_TEST = 67108864
    # a log-probability of a drawn action or label (`dist.log_prob(a)`, `log_softmax(x)`, `log(probs)`),
    # and sums, views and scalings of it: a policy-gradient term weights it (GA304)
    LOGP = 134217728
    # one of the views a multi-output op returns (`split`, `chunk`, `unbind`): autograd forbids
    # changing it in place while grad mode is on and it requires grad (torch raises "... is a view
    # and is being modified inplace. This view is the output of a function that returns multiple views")
    SPLIT_VIEW = 268435456
    # the output of a network whose last layer the engine does not see (a library model, a module of
    # unseen parameters): unbounded as logits are (LOGITS), but no path the engine saw give logits,
    # so it does not stand against probabilities another path gives (a config's dispatch)
    NET_OUT = 536870912


class _NoConst:
    __slots__ = ()

    def __repr__(self):
        return "NOCONST"


NOCONST = _NoConst()


class QualRef:
    """One of the names a value may stand for (`optimizer_class = bnb.optim.AdamW8bit if args.use_8bit
    else torch.optim.AdamW`): a value joining two names of library code keeps each as one of these in
    its objects, so a call of it calls each (calls.call_value). One per name, for the process."""

    __slots__ = ("oid", "qual")

    def __init__(self, qual: str, oid: int):
        self.qual = qual
        # fixed by the name, below every object's (they count up from 1): the same order in every run
        self.oid = oid

    @classmethod
    def of(cls, qual: str) -> QualRef:
        ref = _QUAL_REFS.get(qual)
        if ref is None:
            ref = _QUAL_REFS[qual] = cls(qual, -1 - zlib.crc32(qual.encode()))
        return ref

    def __hash__(self):
        return self.oid

    def __repr__(self):
        return f"QualRef({self.qual})"


_QUAL_REFS: dict[str, QualRef] = {}

# the classes of objects that hold values (objects.ListObj, DictObj: their `content_value()`), filled
# by objects.py; a flow takes in what they hold
CONTAINERS: set[type] = set()
# the containers among a large set of objects, by the set's id (the set kept with them, so the id
# is not another's): one value of thousands of tensors passes into many flows
_CONTAINERS_OF: dict[int, tuple[frozenset, list]] = {}


def _containers(objs: frozenset) -> list:
    if len(objs) < 32:
        return [o for o in objs if type(o) in CONTAINERS]
    known = _CONTAINERS_OF.get(id(objs))
    if known is not None and known[0] is objs:
        return known[1]
    if len(_CONTAINERS_OF) > 4096:
        _CONTAINERS_OF.clear()
    found = [o for o in objs if type(o) in CONTAINERS]
    _CONTAINERS_OF[id(objs)] = (objs, found)
    return found


def _names_only(v: V) -> bool:
    """`v` is only names of library code (no class or object of the project's): a join of such
    values keeps each name. (`NoisyLinear if noisy else nn.Linear` keeps the project's class.)"""
    return all(type(o) is QualRef for o in v.objs)


def _refs(k: int, c) -> frozenset:
    """The name a value that is only a name of library code stands for, as a QualRef."""
    if k == Kind.MODREF and isinstance(c, str) and not c.startswith("<"):
        return frozenset((QualRef.of(c),))
    return EMPTY


class V:
    __slots__ = (
        "const",
        "cuts",
        "facts",
        "grads",
        "items",
        "k",
        "marks",
        "objs",
        "org",
        "risks",
        "saves",
        "shape",
        "site",
        "terms",
        "top",
        "unk",
        "weak",
    )

    def __init__(
        self,
        k=Kind.UNKNOWN,
        objs=EMPTY,
        org=EMPTY,
        weak=EMPTY,
        top=False,
        cuts=EMPTY,
        saves=EMPTY,
        grads=EMPTY,
        items=None,
        const=NOCONST,
        site=None,
        unk=None,
        facts=0,
        terms=EMPTY,
        shape=None,
        marks=0,
        risks=EMPTY,
    ):
        self.risks = risks
        self.terms = terms
        self.shape = shape
        self.marks = marks
        self.k = k
        # a value whose kind is not known is, by default, one whose content was not seen
        self.unk = (k & 262144) != 0 if unk is None else unk  # Kind.UNKNOWN
        self.facts = facts
        self.objs = objs
        self.org = org
        self.weak = weak
        self.top = top
        self.cuts = cuts
        self.saves = saves
        self.grads = grads
        self.items = items
        self.const = const
        self.site = site

    def replace(self, **kw) -> V:
        new = V.__new__(V)
        # each field copied by name, then the changed ones: a loop over the slots with getattr and
        # setattr was a few percent of large programs
        new.const, new.cuts, new.facts, new.grads, new.items, new.k = (
            self.const,
            self.cuts,
            self.facts,
            self.grads,
            self.items,
            self.k,
        )
        new.marks, new.objs, new.org, new.risks, new.saves, new.shape = (
            self.marks,
            self.objs,
            self.org,
            self.risks,
            self.saves,
            self.shape,
        )
        new.site, new.terms, new.top, new.unk, new.weak = self.site, self.terms, self.top, self.unk, self.weak
        for name, value in kw.items():
            setattr(new, name, value)
        return new

    @property
    def carries(self) -> bool:
        """May carry gradient from some parameter."""
        return bool(self.org or self.weak or self.top)

    def of(self, cls):
        """The heap objects of one class this value may refer to."""
        return [o for o in self.objs if isinstance(o, cls)]

    def __repr__(self):
        parts = [f"k={self.k}"]
        if self.objs:
            parts.append(f"objs={sorted(map(repr, self.objs))}")
        if self.org:
            parts.append(f"org={sorted(u.name for u in self.org)}")
        if self.weak:
            parts.append(f"weak={sorted(u.name for u in self.weak)}")
        if self.top:
            parts.append("top")
        if self.unk:
            parts.append("unk")
        if self.facts:
            parts.append(f"facts={self.facts}")
        if self.cuts:
            parts.append(f"cuts={len(self.cuts)}")
        if self.items is not None:
            parts.append(f"items={self.items!r}")
        if self.const is not NOCONST:
            parts.append(f"const={self.const!r}")
        return "V(" + ", ".join(parts) + ")"


UNKNOWN = V()
NONE = V(Kind.NONE, const=None)


def const(value, site=None) -> V:
    if value is None:
        return NONE
    if isinstance(value, str):
        return V(Kind.STR, const=value, site=site)
    if isinstance(value, (bool, int, float, complex)):
        return V(Kind.NUMBER, const=value, site=site)
    return V(Kind.UNKNOWN, const=value, site=site)


@overload
def join(a: V, b: V | None) -> V: ...
@overload
def join(a: V | None, b: V) -> V: ...
@overload
def join(a: V | None, b: V | None) -> V | None: ...
def join(a: V | None, b: V | None) -> V | None:
    if a is None:
        return b
    if b is None or a is b:
        return a
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    c = a.const if (a.const is not NOCONST and type(a.const) is type(b.const) and a.const == b.const) else NOCONST
    objs = a.objs | b.objs if b.objs else a.objs
    if c is NOCONST and (a.k | b.k) & Kind.MODREF and _names_only(a) and _names_only(b):
        objs = objs | _refs(a.k, a.const) | _refs(b.k, b.const)  # two names: each kept
    return V(
        a.k | b.k,
        objs,
        a.org | b.org if b.org else a.org,
        a.weak | b.weak if b.weak else a.weak,
        a.top or b.top,
        a.cuts | b.cuts if b.cuts else a.cuts,
        a.saves | b.saves if b.saves else a.saves,
        a.grads | b.grads if b.grads else a.grads,
        items,
        c,
        a.site if a.site is not None else b.site,
        a.unk or b.unk,
        _join_facts(a, b),
        a.terms | b.terms if b.terms else a.terms,
        a.shape if a.shape == b.shape else _join_shapes(a.shape, b.shape, a.k, b.k),
        a.marks | b.marks,
        a.risks | b.risks if b.risks else a.risks,
    )


def _join_facts(a: V, b: V) -> int:
    return _join_facts_of(a.facts | _number_facts(a.const), a.marks, b.facts | _number_facts(b.const), b.marks)


def _number_facts(c) -> int:
    """A Python number's sign as facts: `if n == 0: n = 1` joins a count known > 0 on the other
    arm with 1, and the join is > 0 on every path."""
    if type(c) is int or type(c) is float:
        return Fact.POSITIVE | Fact.NONNEG if c > 0 else Fact.NONNEG if c == 0 else 0
    return 0


_UNSAFE_AT_ZERO = Mark.ZERO | Mark.PROB | Mark.SIGM | Mark.SELF


def _join_facts_of(af: int, am: int, bf: int, bm: int) -> int:
    """What holds on every path of two joined values: the facts both hold, and Fact.MASKED_ZERO
    when one side has it and the other is dense with nothing that can be exactly 0 (a query that
    is a ReLU encoder's output, or that output passed through an LSTM cell)."""
    out = af & bf
    if (af | bf) & Fact.MASKED_ZERO and not out & Fact.MASKED_ZERO:
        if (af & Fact.MASKED_ZERO and _dense_only(bm)) or (bf & Fact.MASKED_ZERO and _dense_only(am)):
            out |= Fact.MASKED_ZERO
    return out


def _dense_only(marks: int) -> bool:
    return bool(marks & Mark.DENSE) and not marks & _UNSAFE_AT_ZERO


def _join_shapes(a, b, ka: int = 0, kb: int = 0):
    from .shapes import join as join_shape

    # a Python number is 0-dim: `total = 0; total += loss` joins to a 0-dim value, not an unknown shape
    if a is None and ka == Kind.NUMBER:
        a = ()
    if b is None and kb == Kind.NUMBER:
        b = ()
    return join_shape(a, b)


def join_all(values) -> V:
    vals = values if isinstance(values, list) else list(values)
    if len(vals) < 16 or any(v is None for v in vals):
        out = None
        for v in vals:
            out = join(out, v)
        return out if out is not None else UNKNOWN
    # a module's many submodules, a joined receiver's many results: one pass, not a copy of the
    # growing sets per value (quadratic); the same value as joining them in turn
    return _fold(vals[0], vals[1:])


def join_many(first: V | None, values: list[V]) -> V | None:
    """`join` of `first` with each of `values` in turn, in one pass: a long list display joined
    element by element copies its growing sets once per element (quadratic in the elements)."""
    out = first
    if len(values) < 16:
        for v in values:
            out = join(out, v)
        return out
    if first is None:
        return _fold(values[0], values[1:])
    return _fold(first, values)


def _fold(a: V, rest: list[V]) -> V:
    """`join(...join(join(a, rest[0]), rest[1])..., rest[-1])`, each set built once."""
    i = 0
    while i < len(rest) and rest[i] is a:
        i += 1  # join(a, a) is a: only the leading repeats, as joining in turn skips
    if i == len(rest):
        return a
    k, top, unk, facts, marks = a.k, a.top, a.unk, a.facts, a.marks
    items = a.items
    c = a.const
    site = a.site
    shape = a.shape
    sets: list[list] = [[a.objs], [a.org], [a.weak], [a.cuts], [a.saves], [a.grads], [a.terms], [a.risks]]
    for b in rest[i:]:
        if shape != b.shape:
            shape = _join_shapes(shape, b.shape, k, b.k)
        if (
            (k | b.k) & Kind.MODREF
            and not (c is not NOCONST and type(c) is type(b.const) and c == b.const)
            and all(type(o) is QualRef for s in sets[0] for o in s)
            and _names_only(b)
        ):
            sets[0] += [_refs(k, c), _refs(b.k, b.const)]  # as join keeps two names
        k |= b.k
        top = top or b.top
        unk = unk or b.unk
        facts = _join_facts_of(facts, marks, b.facts, b.marks)
        marks |= b.marks
        if items is not None and b.items is not None and len(items) == len(b.items):
            items = tuple(join(x, y) for x, y in zip(items, b.items))
        else:
            items = None
        if not (c is not NOCONST and type(c) is type(b.const) and c == b.const):
            c = NOCONST
        if site is None:
            site = b.site
        for acc, s in zip(sets, (b.objs, b.org, b.weak, b.cuts, b.saves, b.grads, b.terms, b.risks)):
            if s:
                acc.append(s)
    objs, org, weak, cuts, saves, grads, terms, risks = (
        acc[0] if len(acc) == 1 else frozenset().union(*acc) for acc in sets
    )
    return V(k, objs, org, weak, top, cuts, saves, grads, items, c, site, unk, facts, terms, shape, marks, risks)


class Flow:
    """The gradient-relevant part of one or more values, merged: what an op's result inherits."""

    __slots__ = (
        "cuts",
        "grads",
        "marks",
        "org",
        "orgs",
        "other",
        "risks",
        "saves",
        "tensor",
        "terms",
        "top",
        "unk",
        "unreduced",
        "weak",
    )

    def __init__(self):
        self.risks = EMPTY
        self.terms = EMPTY
        self.marks = 0
        self.unreduced = False
        self.unk = False  # or the Site where unseen content came in
        self.other = False  # an input may require grad through something else than known leaves
        self.orgs = False  # an input requires grad through known leaves (unless they are all frozen)
        self.org = EMPTY
        self.weak = EMPTY
        self.top = False
        self.cuts = EMPTY
        self.saves = EMPTY
        self.grads = EMPTY
        self.tensor = False

    def add(self, v: V, seen=None):
        if not v.objs or not _containers(v.objs):
            # most values hold no container: their sets joined in directly
            if v.org:
                self.org = v.org if not self.org else self.org | v.org
            if v.weak:
                self.weak = v.weak if not self.weak else self.weak | v.weak
            if v.cuts:
                self.cuts = v.cuts if not self.cuts else self.cuts | v.cuts
            if v.saves:
                self.saves = v.saves if not self.saves else self.saves | v.saves
            if v.grads:
                self.grads = v.grads if not self.grads else self.grads | v.grads
            if v.terms:
                self.terms = v.terms if not self.terms else self.terms | v.terms
            if v.risks:
                self.risks = v.risks if not self.risks else self.risks | v.risks
            self._flags(v)
            return self
        # the sets of `v` and of what its containers hold are gathered, then joined once each: a
        # list of many values joined one by one copied the growing sets once per value
        parts: tuple[list, ...] = (
            [self.org],
            [self.weak],
            [self.cuts],
            [self.saves],
            [self.grads],
            [self.terms],
            [self.risks],
        )
        self._gather(v, seen, parts)
        self.org, self.weak, self.cuts, self.saves, self.grads, self.terms, self.risks = (
            p[0] if len(p) == 1 else p[1] if len(p) == 2 and not p[0] else frozenset().union(*p) for p in parts
        )
        return self

    def _gather(self, v: V, seen, parts: tuple[list, ...]) -> None:
        # unrolled: the hottest loop of large programs (a zip over seven sets per value)
        if v.org:
            parts[0].append(v.org)
        if v.weak:
            parts[1].append(v.weak)
        if v.cuts:
            parts[2].append(v.cuts)
        if v.saves:
            parts[3].append(v.saves)
        if v.grads:
            parts[4].append(v.grads)
        if v.terms:
            parts[5].append(v.terms)
        if v.risks:
            parts[6].append(v.risks)
        self._flags(v)
        for o in _containers(v.objs):
            if seen is None:
                seen = set()
            if id(o) not in seen:
                seen.add(id(o))
                for c in o.content_value():
                    self._gather(c, seen, parts)

    def _flags(self, v: V) -> None:
        if v.top:
            self.top = True
        self.marks |= v.marks
        if v.facts & Fact.UNREDUCED:
            self.unreduced = True
        if v.unk and not self.unk:
            self.unk = v.unk  # the first place where unseen content came in
        if v.k & (Kind.TENSOR | Kind.PARAMS):
            self.tensor = True
        if not (v.facts & Fact.NOGRAD):
            if v.weak or v.top or v.unk:
                self.other = True
            elif v.org:
                self.orgs = True

    @property
    def carries(self) -> bool:
        return bool(self.org or self.weak or self.top)

    @property
    def nograd(self) -> bool:
        """No input can require grad (frozen parameters build no graph)."""
        return not self.other and (not self.orgs or not _live(self.org))

    def value(self, k=Kind.TENSOR, objs=EMPTY, site=None, facts=0, shape=None) -> V:
        return V(
            k,
            objs,
            self.org,
            self.weak,
            self.top,
            self.cuts,
            self.saves,
            self.grads,
            site=site,
            unk=self.unk,
            facts=facts,
            terms=self.terms,
            shape=shape,
            marks=self.marks,
            risks=self.risks,
        )


def _live(units) -> bool:
    """Some of these leaves requires grad right now (frozen ones build no graph)."""
    return any(u.frozen != FROZEN for u in units)


def requires_grad(v: V) -> bool:
    """The value may require grad now: ops on it record graph (and save tensors for backward)."""
    return not (v.facts & Fact.NOGRAD) and bool(v.weak or v.top or _live(v.org))


def surely_requires_grad(v: V) -> bool:
    """The value certainly requires grad: it carries a parameter that does (not only maybe)."""
    return not (v.facts & Fact.NOGRAD) and _live(v.org)


def flow_of(*values: V) -> Flow:
    f = Flow()
    for v in values:
        if v is not None:
            f.add(v)
    return f


class Star:
    """A `*args` argument whose elements are not known one by one."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def make_tuple(items, node) -> V:
    f = flow_of(*items)
    return V(
        Kind.TUPLE,
        EMPTY,
        f.org,
        f.weak,
        f.top,
        f.cuts,
        f.saves,
        f.grads,
        tuple(items),
        site=node,
        unk=f.unk,
        terms=f.terms,
        risks=f.risks,
    )


def passthrough(args) -> V | None:
    """What a wrapper hands back (accelerator.prepare, DDP, torch.compile...): what it was given,
    when that is a known object (one value, or a tuple of several)."""
    vals = [a for a in args if isinstance(a, V)]
    if not vals or not any(v.objs for v in vals):
        return None
    if len(vals) == 1:
        return vals[0]
    return make_tuple(vals, None)

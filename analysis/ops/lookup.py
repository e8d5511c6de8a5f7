"""The op table's lookups (the API `gradaudit.analysis.ops` re-exports; see its docstring)."""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from .records import (  # noqa: F401  (the records are the package's API too: __init__ re-exports them from here)
    AT,
    COMPOSITE,
    EFFECTS,
    GRAD,
    GRAD_STATUSES,
    NONE,
    RAISES,
    ZERO,
    Arg,
    Domain,
    Output,
    Overload,
    Save,
    decode,
)

NAMESPACES = (
    "Tensor",
    "torch",
    "torch.nn.functional",
    "torch.linalg",
    "torch.special",
    "torch.fft",
    "torch._C._nn",
    "torch.nn",
    "operator",
    "aten",
)
_ALIASES = {
    "F": "torch.nn.functional",
    "nn": "torch.nn",
    "torch.Tensor": "Tensor",
    "linalg": "torch.linalg",
    "special": "torch.special",
    "fft": "torch.fft",
}
# which variant of an ATen overload a namespace reaches
_VARIANT = {
    "Tensor": "m",
    "torch": "f",
    "torch.linalg": "f",
    "torch.special": "f",
    "torch.fft": "f",
    "torch._C._nn": "f",
    "operator": "",
    "aten": "",
    "torch.nn.functional": "",
    "torch.nn": "",
}

# argument kinds for OpInfo.match: what the caller knows about each value it passes
KINDS = ("tensor", "number", "bool", "str", "none", "list", "unknown")


def _data():
    from . import _table

    return _table


def _lines(text: str, prefix: str) -> list[str]:
    """The consecutive lines of `text` (sorted, each preceded by a newline) that start with `prefix`."""
    out = []
    at = text.find("\n" + prefix)
    while at != -1:
        end = text.find("\n", at + 1)
        line = text[at + 1 : end if end != -1 else len(text)]
        if not line.startswith(prefix):
            break
        out.append(line)
        at = end
    return out


@cache
def _overloads(op: str) -> tuple[Overload, ...]:
    t = _data()
    doms: dict[str, list[Domain]] = {}
    for line in _lines(t.DOMAINS, op + "\t"):
        _, ovl, arg, at, effect, why, given = line.split("\t")
        doms.setdefault(ovl, []).append(Domain(arg, at, effect, why, given))
    out = []
    for line in _lines(t.OPS, op + "|"):
        ovl = line.split("|", 2)[1]
        out.append(decode(line, tuple(doms.get(ovl, ()))))
    return tuple(out)


@cache
def _target(ns: str, name: str) -> str | None:
    hit = _lines(_data().SURFACES, f"{ns}|{name}|")
    return hit[0].rsplit("|", 1)[1] if hit else None


def _fit(ov: Overload, args, keywords) -> int | None:
    """How well a call with argument kinds `args` (positional) and `keywords` fits `ov`: a cost
    (0 best), or None when it cannot be this overload."""
    positional = [a for a in ov.args if not a.kw_only]
    if len(args) > len(positional):
        return None
    names = {a.name: a for a in ov.args}
    given = {a.name for a in positional[: len(args)]}
    for k in keywords:
        if k not in names or k in given:
            return None
        given.add(k)
    if any(not a.default and a.name not in given for a in ov.args):
        return None  # torch's Python signatures require every argument without a default
    cost = 0
    for a, kind in [*zip(positional, args), *((names[k], v) for k, v in keywords.items())]:
        c = _compat(a.type, kind)
        if c is None:
            return None
        cost += c
    return cost


def _compat(typ: str, kind: str) -> int | None:
    if kind == "unknown":
        return 0
    optional = typ.endswith("?")
    base = typ.rstrip("?")
    if kind == "none":
        return 0 if optional else None
    if base.endswith("[]"):
        if kind == "list":
            return 0
        return 1 if kind == "number" and not base.startswith("Tensor") else None
    if kind == "tensor":
        return 0 if base in ("Tensor", "Parameter") else 2 if base == "Scalar" else None
    if kind in ("number", "bool"):
        if base in ("Scalar", "float", "int", "bool"):
            return 0 if (kind == "bool") == (base == "bool") or base == "Scalar" else 1
        return 1 if base == "Tensor" else None
    if kind == "str":
        return 0 if base in ("str", "Dimname") else None
    if kind == "list":
        return None
    return None


class OpInfo(NamedTuple):
    """A name users write, with the ATen overloads (or the decomposition) it reaches."""

    namespace: str
    name: str
    target: str  # the ATen op, or `=key` of a decomposition
    overloads: tuple[Overload, ...]

    @property
    def op(self) -> str:
        """The ATen op name, or the decomposition's key."""
        return self.target.lstrip("=")

    @property
    def decomposed(self) -> bool:
        """A Python-level function or operator written as several ATen ops (see `steps`)."""
        return self.target.startswith("=")

    @property
    def steps(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for ov in self.overloads for s in ov.steps))

    def match(self, args=(), keywords=None) -> tuple[Overload, ...]:
        """The overloads a call reaches, given each argument's kind (KINDS): `args` positional (a
        method's receiver first), `keywords` name -> kind. The best-fitting ones; () if none fits."""
        keywords = keywords or {}
        scored = [(c, ov) for ov in self.overloads if (c := _fit(ov, tuple(args), keywords)) is not None]
        if not scored:
            return ()
        best = min(c for c, _ in scored)
        return tuple(ov for c, ov in scored if c == best)

    # --- gradients ---------------------------------------------------------------------------

    @property
    def differentiable(self) -> tuple[str, ...]:
        """Inputs that get a gradient in some overload (formula or decomposition)."""
        return tuple(dict.fromkeys(n for ov in self.overloads for n in ov.differentiable))

    @property
    def no_grad(self) -> bool:
        """No overload's result carries gradient: argmax, comparisons, isnan, nonzero."""
        return bool(self.overloads) and all(ov.no_grad for ov in self.overloads)

    @property
    def zero_grad(self) -> bool:
        """Every overload's gradient is zero almost everywhere: round, floor, ceil, trunc, sign."""
        return bool(self.overloads) and all(ov.zero_grad for ov in self.overloads)

    @property
    def grad_raises(self) -> bool:
        """backward() raises "derivative ... not implemented" for every overload (floor_divide)."""
        return bool(self.overloads) and all(
            any(s == RAISES for _, s in ov.grads) and not any(s == GRAD for _, s in ov.grads) for ov in self.overloads
        )

    @property
    def no_gradient(self) -> bool:
        """No gradient reaches any input through any overload: no output carries one, or every
        input's derivative is zero, absent or raises (argmax, round, eq, floor_divide)."""
        return bool(self.overloads) and all(
            ov.no_grad or not any(s in (GRAD, COMPOSITE) for _, s in ov.grads) for ov in self.overloads
        )

    @property
    def opaque(self) -> bool:
        """Every overload is a composite the table cannot see into."""
        return bool(self.overloads) and all(ov.composite and not ov.steps for ov in self.overloads)

    @property
    def integral(self) -> bool:
        """Every overload's first result has an integer or bool dtype."""
        return bool(self.overloads) and all(ov.outputs and ov.outputs[0].integral for ov in self.overloads)

    def nondiff_outputs(self) -> tuple[str, ...]:
        """Outputs that carry no gradient in every overload that has them (sort/topk/max.dim: indices)."""
        seen: dict[str, bool] = {}
        for ov in self.overloads:
            for o in ov.outputs:
                seen[o.name] = seen.get(o.name, True) and not o.grad
        return tuple(n for n, nd in seen.items() if nd)

    # --- aliasing and in-place -----------------------------------------------------------------

    @property
    def inplace(self) -> bool:
        return bool(self.overloads) and all(ov.inplace for ov in self.overloads)

    @property
    def inplace_of(self) -> str | None:
        """`add` for `add_` (the out-of-place ATen op)."""
        op = self.op
        if self.inplace and op.endswith("_") and _overloads(op[:-1]):
            return op[:-1]
        return None

    @property
    def inplace_variant(self) -> str | None:
        """`add_` for `add`: the ATen op that writes into its first argument."""
        if self.decomposed or self.inplace:
            return None
        return self.op + "_" if _overloads(self.op + "_") else None

    @property
    def out_variant(self) -> bool:
        """Some overload has an `out=` form (which writes into `out` in place)."""
        return any(ov.has("o") for ov in self.overloads)

    @property
    def shape_inplace(self) -> bool:
        """Changes its input's shape in place (`unsqueeze_`, `t_`): an in-place op for autograd."""
        return bool(self.overloads) and all(ov.has("w") for ov in self.overloads)

    @property
    def view(self) -> bool:
        """Always returns a view of its input: it shares storage (an in-place change of one changes
        the other)."""
        return bool(self.overloads) and all(ov.view for ov in self.overloads)

    @property
    def may_alias(self) -> bool:
        """Some overload may return its input or a view of it (view, reshape, to, contiguous)."""
        return any(
            ov.view or ov.has("a") or (ov.outputs and ov.outputs[0].alias and not ov.outputs[0].mutated)
            for ov in self.overloads
        )

    @property
    def random(self) -> bool:
        return any(ov.has("s") for ov in self.overloads)

    # --- what backward needs -------------------------------------------------------------------

    @property
    def saves_known(self) -> bool:
        """False when an overload (or an op it decomposes into) has no formula the table knows:
        its saves may be incomplete."""
        return all(not (ov.composite and not ov.steps) and not ov.has("q") for ov in self.overloads)

    @property
    def saves_result(self) -> bool:
        """Every overload that records a backward saves its (first) result: an in-place change of
        the result breaks backward (exp, sigmoid, tanh, softmax, sqrt)."""
        recording = [ov for ov in self.overloads if any(s in (GRAD, ZERO, COMPOSITE) for _, s in ov.grads)]
        return bool(recording) and all(
            ov.outputs and any(s.output and s.value == ov.outputs[0].name for s in ov.saves) for ov in recording
        )

    def saves(self) -> tuple[Save, ...]:
        """Saves common to every overload where the saved value and the inputs it is saved for are
        tensors (a save of a number is no save): what every call of this name saves. `when`
        joins the overloads' conditions."""
        out: dict[tuple[str, bool], set[str]] = {}
        cands: dict[tuple[str, bool], list[Save]] = {}
        # overloads whose backward raises or that take no gradient record nothing to change
        recording = [ov for ov in self.overloads if any(s in (GRAD, ZERO, COMPOSITE) for _, s in ov.grads)]
        for ov in recording:
            for s in ov.saves:
                cands.setdefault((s.value, s.output), []).append(s)
        for key, found in cands.items():
            value, output = key
            ok = True
            for ov in recording:
                if not output and not ((a := ov.arg(value)) and a.tensor):
                    continue
                if output and not any(o.name == value for o in ov.outputs):
                    continue
                hit = next((s for s in ov.saves if (s.value, s.output) == key), None)
                when = [w for w in (hit.when if hit else found[0].when) if (a := ov.arg(w)) and a.tensor]
                if hit is None and when:
                    ok = False
                    break
            if ok:
                out[key] = {w for s in found for w in s.when}
        order = [a.name for ov in self.overloads for a in ov.args]
        return tuple(Save(v, o, tuple(sorted(w, key=order.index))) for (v, o), w in out.items())

    @property
    def reduction(self) -> str | None:
        """A loss function's or loss module's default `reduction` ('mean': a scalar unless the
        call passes reduction='none'), from torch's own signatures; None for other ops."""
        return _data().REDUCTIONS.get(self.op) if self.decomposed else None

    # --- values --------------------------------------------------------------------------------

    @property
    def domain(self) -> tuple[Domain, ...]:
        """Where the value or the gradient stops being finite, over all overloads."""
        seen: dict[tuple[str, str, str, str], Domain] = {}
        for ov in self.overloads:
            for d in ov.domain:
                seen.setdefault((d.arg, d.at, d.effect, d.given), d)
        return tuple(seen.values())

    def domain_of(self, arg: str, effect: str | None = None) -> tuple[Domain, ...]:
        return tuple(d for d in self.domain if d.arg == arg and (effect is None or d.effect == effect))


def op_for(namespace: str, name: str) -> OpInfo | None:
    """The op a name reaches in a namespace (see NAMESPACES; `F` and `nn` are accepted)."""
    return _op_for(_ALIASES.get(namespace, namespace), name)


@cache
def _op_for(ns: str, name: str) -> OpInfo | None:
    if ns == "aten":
        target = name if _overloads(name) else None
    else:
        target = _target(ns, name)
    if target is None:
        return None
    return make_opinfo(ns, name, target, _overloads(target.lstrip("=")))


def make_opinfo(ns: str, name: str, target: str, overloads: tuple[Overload, ...]) -> OpInfo:
    """An OpInfo with the overloads `ns` reaches: a method reaches the method variants, a function
    the function variants, and only what Python can call, unless asked for ATen itself."""
    ovs = overloads
    if not target.startswith("=") and ns != "aten":
        variant = _VARIANT.get(ns, "")
        ovs = tuple(ov for ov in ovs if (not variant or variant in ov.flags) and not ov.has("x")) or ovs
    return OpInfo(ns, name, target, ovs)


def operator_for(ast_op: str, reflected: bool = False, inplace: bool = False) -> OpInfo | None:
    """The op of a Python operator by its `ast` class name (`Mult`, `Div`, `USub`, `Gt`):
    `reflected` when the tensor is the right operand (`2 / x`), `inplace` for `x /= y`."""
    dunders = _data().AST_OPERATORS.get(ast_op)
    if dunders is None:
        return None
    name = dunders[2] if inplace else dunders[1] if reflected else dunders[0]
    return op_for("operator", name) if name else None


def names(namespace: str) -> frozenset[str]:
    """Every name the table knows in a namespace."""
    ns = _ALIASES.get(namespace, namespace)
    if ns == "aten":
        return frozenset(line.split("|", 1)[0] for line in _data().OPS.split("\n") if line)
    return frozenset(line.split("|")[1] for line in _lines(_data().SURFACES, ns + "|"))


def may_return_self(name: str) -> str | None:
    """Why `x.name(...)` can return `x` itself (a leaf stays a leaf), or None: every other op that
    takes part in autograd returns a new tensor (a non-leaf when its input requires grad)."""
    return _data().MAY_RETURN_SELF.get(name)

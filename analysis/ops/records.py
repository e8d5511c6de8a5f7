"""What one torch op does to values and gradients, as frozen data.

The generated table (`_table.py`) stores each overload as one line of text in one string;
`decode` turns a line into an `Overload` when the op is first looked up, so importing the table
costs no more than loading one string (and compiling it, without a .pyc, is fast: one token).
The format, field by field (`|` between fields, `,` between items):

    op | overload | flags | args | outputs | grads | saves | steps

- flags: one letter each: m method, f function, i in-place (`op_`), u mutates another argument,
  c composite (no formula of its own: autograd sees the ops it calls), o has an `out=` variant,
  p pointwise, r reduction, s random (`nondeterministic_seeded`), y output shape depends on the
  data, l its values depend only on its input's shape (zeros_like, new_ones), w changes its
  input's shape in place (`unsqueeze_`, `t_`: a version bump like any
  in-place op), v view (shares storage with its input, always), a may return its input itself (`to`,
  `contiguous`), x not exposed to Python (reached through a decomposition), q a decomposition
  through an op whose saves are unknown (so `saves` may be incomplete);
- args: `[*]name:type[=][!]`: `*` keyword-only, `=` has a default, `!` written in place;
- outputs: `[-][#]name:type[~input][!]`: `-` carries no gradient, `#` integer or bool dtype,
  `~input` aliases that input, `!` the mutated input returned;
- grads, per tensor input: `name=g` gradient formula, `z` zero almost everywhere, `n` none
  (non-differentiable), `x` backward raises (not implemented), `c` through the decomposition;
- saves: `[@]value<in1+in2`: the tensor `value` (`@`: an output) is saved for backward when any
  of `in1`, `in2` requires grad;
- steps: for a decomposition, the ATen overloads it runs, `;`-separated.

The records are NamedTuples, immutable like the project's frozen dataclasses: building six
frozen dataclasses costs about 4 ms at import (their methods are generated and exec'd), six
NamedTuples about 0.5 ms, and the engine pays that at its first op lookup.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

# gradient of the result with respect to one input
GRAD = "g"  # a derivative formula
ZERO = "z"  # zero almost everywhere (round, sign, comparisons written in place...)
NONE = "n"  # not differentiable: no gradient flows (indices, masks, integer outputs)
RAISES = "x"  # backward raises "derivative for ... is not implemented"
COMPOSITE = "c"  # differentiable through the ops it decomposes into (not listed)

GRAD_STATUSES = (GRAD, ZERO, NONE, RAISES, COMPOSITE)


class Arg(NamedTuple):
    name: str
    type: str  # torch schema type: Tensor, Tensor?, Tensor[], Scalar, int, int[], float, ...
    kw_only: bool = False
    default: bool = False
    mutated: bool = False  # `Tensor(a!)`: written in place

    @property
    def tensor(self) -> bool:
        return self.type.startswith("Tensor") or self.type == "Parameter"


class Output(NamedTuple):
    name: str  # `result` for a single output, else the schema's names (values, indices)
    type: str
    grad: bool = True  # False: carries no gradient (argmax, comparisons, sort's indices)
    integral: bool = False  # integer or bool dtype
    alias: str = ""  # the input it may share storage with (a view, or the input itself)
    mutated: bool = False  # the input changed in place, returned


class Save(NamedTuple):
    """A tensor the backward formulas read: changing it in place before backward() raises."""

    value: str  # an input name, or an output name when `output`
    output: bool
    when: tuple[str, ...]  # saved when any of these inputs requires grad


class Domain(NamedTuple):
    """Where an op's value or gradient is not finite."""

    arg: str  # the input the condition is on (`self`, `other`, `exponent`, ...)
    at: str  # one of AT below
    effect: str  # one of EFFECTS below
    why: str  # the formula it was read from, or the reason for a hand-written fact
    given: str = ""  # another input the fact depends on (`exponent` for pow: 0 < exponent < 1)


# conditions on an input value
AT = {
    "zero": "x == 0",
    "negative": "x < 0",
    "minus_one": "x == -1",
    "below_minus_one": "x < -1",
    "unit": "|x| == 1",
    "outside_unit": "|x| > 1",
    "one": "x == 1",
    "below_one": "x < 1",
    "zero_or_one": "x == 0 or x == 1",
    "outside_zero_one": "x < 0 or x > 1",
    "nonpositive_int": "x in {0, -1, -2, ...}",
    "negative_int": "x in {-1, -2, ...}",
    "large": "x large (overflows: exp(89) is inf in float32)",
    "fractional_exponent": "0 < exponent < 1 (a fractional power, at x == 0)",
    "negative_exponent": "exponent < 0 (at x == 0)",
}
EFFECTS = {
    "value_inf": "the value is infinite",
    "value_nan": "the value is NaN",
    "grad_inf": "the gradient is infinite (or NaN)",
    "grad_nan": "the gradient is NaN",
}


class Overload(NamedTuple):
    op: str  # ATen name: mul, add_, _softmax (or a surface name for a decomposition)
    overload: str  # Tensor, Scalar, dim, '' (the default)
    flags: str
    args: tuple[Arg, ...]
    outputs: tuple[Output, ...]
    grads: tuple[tuple[str, str], ...]  # (tensor input, one of GRAD_STATUSES)
    saves: tuple[Save, ...]
    steps: tuple[str, ...] = ()  # a decomposition: the ATen overloads it runs
    domain: tuple[Domain, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.op}.{self.overload}" if self.overload else self.op

    def has(self, flag: str) -> bool:
        return flag in self.flags

    @property
    def inplace(self) -> bool:
        return "i" in self.flags

    @property
    def view(self) -> bool:
        return "v" in self.flags

    @property
    def composite(self) -> bool:
        """No formula of its own; `saves` is only known when `steps` says what it runs."""
        return "c" in self.flags

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)

    def grad(self, name: str) -> str | None:
        return next((s for n, s in self.grads if n == name), None)

    @property
    def differentiable(self) -> tuple[str, ...]:
        """Inputs a gradient flows back to (formula or decomposition)."""
        return tuple(n for n, s in self.grads if s in (GRAD, COMPOSITE))

    @property
    def zero_grad(self) -> bool:
        """Every input that takes part in autograd gets a zero gradient (round, floor, sign)."""
        live = [s for _, s in self.grads if s != NONE]
        return bool(live) and all(s == ZERO for s in live)

    @property
    def no_grad(self) -> bool:
        """No output carries gradient (argmax, comparisons, isnan)."""
        return not any(o.grad for o in self.outputs if o.type.startswith("Tensor"))

    def saved_inputs(self, requires_grad: Iterable[str]) -> tuple[str, ...]:
        """Inputs saved for backward when the inputs named in `requires_grad` require grad."""
        rg = set(requires_grad)
        return tuple(s.value for s in self.saves if not s.output and rg.intersection(s.when))

    def saved_outputs(self) -> tuple[str, ...]:
        return tuple(s.value for s in self.saves if s.output)


def _arg(text: str) -> Arg:
    kw = text.startswith("*")
    text = text.lstrip("*")
    mutated = text.endswith("!")
    text = text.rstrip("!")
    default = text.endswith("=")
    name, _, typ = text.rstrip("=").partition(":")
    return Arg(name, typ, kw, default, mutated)


def _output(text: str) -> Output:
    grad = not text.startswith("-")
    text = text.lstrip("-")
    integral = text.startswith("#")
    text = text.lstrip("#")
    mutated = text.endswith("!")
    text = text.rstrip("!")
    text, _, alias = text.partition("~")
    name, _, typ = text.partition(":")
    return Output(name, typ, grad, integral, alias, mutated)


def _save(text: str) -> Save:
    value, _, when = text.partition("<")
    out = value.startswith("@")
    return Save(value.lstrip("@"), out, tuple(when.split("+")) if when else ())


def _items(field: str) -> list[str]:
    return field.split(",") if field else []


def _grad(field: str) -> tuple[str, str]:
    name, status = field.split("=")  # encode() writes `name=status`
    return name, status


def decode(line: str, domain: tuple[Domain, ...] = ()) -> Overload:
    op, overload, flags, args, outs, grads, saves, steps = line.split("|")
    return Overload(
        op,
        overload,
        flags,
        tuple(_arg(a) for a in _items(args)),
        tuple(_output(o) for o in _items(outs)),
        tuple(_grad(g) for g in _items(grads)),
        tuple(_save(s) for s in _items(saves)),
        tuple(steps.split(";")) if steps else (),
        domain,
    )


def encode(ov: Overload) -> str:
    """The inverse of `decode` (without the domain, stored beside the table)."""

    def arg(a: Arg) -> str:
        return f"{'*' if a.kw_only else ''}{a.name}:{a.type}{'=' if a.default else ''}{'!' if a.mutated else ''}"

    def out(o: Output) -> str:
        return (
            f"{'' if o.grad else '-'}{'#' if o.integral else ''}{o.name}:{o.type}"
            f"{'~' + o.alias if o.alias else ''}{'!' if o.mutated else ''}"
        )

    def save(s: Save) -> str:
        return f"{'@' if s.output else ''}{s.value}<{'+'.join(s.when)}"

    fields = (
        ov.op,
        ov.overload,
        ov.flags,
        ",".join(map(arg, ov.args)),
        ",".join(map(out, ov.outputs)),
        ",".join(f"{n}={s}" for n, s in ov.grads),
        ",".join(map(save, ov.saves)),
        ";".join(ov.steps),
    )
    for f in fields:
        assert "|" not in f, f
    return "|".join(fields)

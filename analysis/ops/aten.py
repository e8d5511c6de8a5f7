"""One ATen overload as torchgen reads it from torch's YAML: its arguments and outputs, which
inputs get a gradient, what backward saves and when, and what its formulas say about where the
gradient stops being finite. Generation time only (imports torchgen); generate.py explains the
method.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ..source.prebuilt import dataclass
from . import domains as D
from . import surface as S
from .records import COMPOSITE, GRAD, NONE, RAISES, ZERO, Arg, Domain, Output, Overload, Save

# --- torch's tables ----------------------------------------------------------------------------


@dataclass
class Torch:
    fns: list  # torchgen NativeFunctionWithDifferentiabilityInfo
    dont_require: set
    view_functions: set
    # torchgen's functions (its objects are untyped here: torchgen is imported only when generating)
    py_binding: Callable[[Any], bool]  # should_generate_py_binding(NativeFunction) -> bool
    differentiable_outputs: Callable[[Any], list[Any]]
    return_names: Callable[[Any], Sequence[str]]
    context: Callable[[Any], AbstractContextManager[Any]]  # torchgen.context.native_function_manager
    version: str


def load_torch() -> Torch:
    import torchgen
    from torchgen.api import cpp
    from torchgen.api.autograd import gen_differentiable_outputs, match_differentiability_info
    from torchgen.context import native_function_manager
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.gen_inplace_or_view_type import VIEW_FUNCTIONS
    from torchgen.packaged.autograd.gen_python_functions import should_generate_py_binding
    from torchgen.packaged.autograd.gen_variable_type import DONT_REQUIRE_DERIVATIVE
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    root = os.path.join(os.path.dirname(torchgen.__file__), "packaged")
    native = os.path.join(root, "ATen", "native", "native_functions.yaml")
    tags = os.path.join(root, "ATen", "native", "tags.yaml")
    infos, _ = load_derivatives(os.path.join(root, "autograd", "derivatives.yaml"), native, tags)
    fns = match_differentiability_info(parse_native_yaml(native, tags).native_functions, infos)
    try:
        from importlib.metadata import version

        ver = version("torch")
    except Exception:  # pragma: no cover - torchgen without a torch distribution
        ver = "unknown"
    return Torch(
        fns,
        set(DONT_REQUIRE_DERIVATIVE),
        set(VIEW_FUNCTIONS),
        should_generate_py_binding,
        gen_differentiable_outputs,
        cpp.return_names,
        native_function_manager,
        ver.split("+")[0],
    )


# --- one ATen overload --------------------------------------------------------------------------


def _type(t) -> str:
    s = str(t)
    s = s.replace("SymInt", "int")
    return re.sub(r"\[\d+\]", "[]", s)


_ZERO = re.compile(r"^(at::)?zeros(_like|_symint)?\(")


def _is_zero(formula: str) -> bool:
    """The whole formula is one `zeros_like(...)` / `at::zeros_symint(...)` call."""
    m = _ZERO.match(formula)
    return m is not None and formula.endswith(")") and _balanced(formula[m.end() : -1])


_TENSOR_SAVE = re.compile(r"\bTensor\b|TensorList|SavedVariable")


def _is_tensor_save(attr) -> bool:
    return attr.expr == attr.nctype.name and bool(_TENSOR_SAVE.search(str(attr.nctype.type)))


def _guard(info, attr, diff_args: list[str], has_list: bool) -> tuple[str, ...]:
    """gen_variable_type.guard_for: the inputs whose need for a gradient makes torch save `attr`."""
    always = tuple(diff_args)
    if (
        has_list
        or "backward" in info.name
        or len(diff_args) <= 1
        or "TensorList" in str(attr.nctype.type)
        or "Optional" in str(attr.nctype.type)
    ):
        return always
    used_in = [d for d in info.derivatives if attr in d.saved_inputs]
    if len(used_in) != 1:
        return always
    der = used_in[0]
    if len(der.var_names) == 1:
        return (der.var_names[0],)
    m = re.search(rf"wrap_opt_if\({re.escape(attr.nctype.name)},(.*?)\)", der.formula)
    if m is None:
        return always
    idx = [int(i) for i in re.findall(r"grad_input_mask\[(\d+)\]", m.group(1))]
    return tuple(diff_args[i] for i in idx if i < len(diff_args)) or always


def _divisor_facts(formula: str, inputs: set[str], why: str) -> list[tuple[str, str, str, str]]:
    """Non-finite gradients a formula shows: division by an input or the result, rsqrt, poles."""
    text = formula.replace(".conj()", "").replace(" ", "")
    names = inputs | {"result"}
    out = []

    def classify(expr: str):
        expr = expr.strip()
        while expr.startswith("(") and _balanced(expr[1:-1]) and expr.endswith(")"):
            expr = expr[1:-1]
        expr = re.sub(r"^(\d+(\.\d+)?\*)|(\*\d+(\.\d+)?)$", "", expr)
        for n in names:
            if expr == n or expr == f"{n}*{n}":
                return n, "zero"
            if expr in (f"1-{n}.pow(2)", f"1-{n}*{n}", f"-{n}*{n}+1", f"{n}*{n}-1", f"{n}.pow(2)-1"):
                return n, "unit"
            if expr in (f"{n}+1", f"1+{n}"):
                return n, "minus_one"
        return None

    # `/ X`, `.div(X)`, `rsqrt(X)`: infinite where X is 0
    for m in re.finditer(r"/|\.div\(|(?<![.\w])rsqrt\(", text):
        operand = _operand(text, m.end()) if m.group() == "/" else _group(text, m.end() - 1)
        hit = classify(operand) if operand else None
        if hit:
            out.append((hit[0], hit[1], "grad_inf", why))
    # `(X).rsqrt()`
    for m in re.finditer(r"\((.*?)\)\.rsqrt\(\)", text):
        inner = _innermost_suffix(text, m.start(), m.end() - len(".rsqrt()"))
        hit = classify(inner) if inner else None
        if hit:
            out.append((hit[0], hit[1], "grad_inf", why))
    # `digamma(X)`, `polygamma(n, X)`: a pole at 0 (float evaluation at the negative integers is inexact)
    for m in re.finditer(r"\b(digamma|polygamma)\((?:[\w+]+,)?(\w+)\)", text):
        if m.group(2) in inputs:
            out.append((m.group(2), "zero", "grad_inf", why))
    return out


def _balanced(s: str) -> bool:
    depth = 0
    for c in s:
        depth += (c == "(") - (c == ")")
        if depth < 0:
            return False
    return depth == 0


def _group(text: str, open_at: int) -> str | None:
    """The text inside the parenthesis opening at `open_at`."""
    depth = 0
    for i in range(open_at, len(text)):
        depth += (text[i] == "(") - (text[i] == ")")
        if depth == 0:
            inner = text[open_at + 1 : i]
            return inner.split(",")[0] if "," in inner and _balanced(inner.split(",")[0]) else inner
    return None


def _operand(text: str, start: int) -> str | None:
    if start < len(text) and text[start] == "(":
        inner = _group(text, start)
        return None if inner is None else f"({inner})"
    m = re.match(r"[\w.]+(\(\))?", text[start:])
    return m.group() if m else None


def _innermost_suffix(text: str, start: int, close: int) -> str | None:
    """For `...(X).rsqrt()` ending at `close` (the `)`), the X its parenthesis opened."""
    depth = 0
    for i in range(close - 1, start - 1, -1):
        depth += (text[i] == ")") - (text[i] == "(")
        if depth == 0:
            return text[i + 1 : close - 1]
    return None


def _flags(f, kind: str, fn_info: bool, py: bool, has_out: bool, views: set) -> str:
    from torchgen.model import Variant

    base = str(f.func.name.name)
    flags = ""
    if Variant.method in f.variants:
        flags += "m"
    if Variant.function in f.variants:
        flags += "f"
    flags += {"inplace": "i", "mutable": "u"}.get(kind, "")
    if not fn_info and f.has_composite_implicit_autograd_kernel:
        flags += "c"
    if has_out:
        flags += "o"
    if "pointwise" in f.tags:
        flags += "p"
    if "reduction" in f.tags:
        flags += "r"
    if "nondeterministic_seeded" in f.tags:
        flags += "s"
    if "dynamic_output_shape" in f.tags or "data_dependent_output" in f.tags:
        flags += "y"
    if "inplace_view" in f.tags:
        flags += "w"
    if base in S.SHAPE_ONLY:
        flags += "l"
    aliased = any(r.annotation is not None and not r.annotation.is_write for r in f.func.returns)
    if kind == "functional" and base in views:
        flags += "v"
    elif aliased:
        flags += "a"
    if not py:
        flags += "x"
    return flags


def aten_overload(t: Torch, fn, has_out: bool) -> Overload:
    from torchgen.model import SchemaKind

    f = fn.func
    schema = f.func
    kind = {SchemaKind.functional: "functional", SchemaKind.inplace: "inplace"}.get(schema.kind(), "mutable")
    op, overload = str(schema.name.name), schema.name.overload_name
    # A CompositeImplicitAutograd kernel is what autograd runs on CPU and CUDA even when the op
    # also has a formula (linear, matmul: the formula serves backends with their own kernel, MPS
    # or nested tensors): autograd records the ops it calls.
    info = None if f.has_composite_implicit_autograd_kernel else (fn.info or {}).get("Default")
    args = []
    alias_of: dict[str, str] = {}
    for a in list(schema.arguments.flat_positional) + list(schema.arguments.flat_kwarg_only):
        ann = a.annotation
        if ann is not None:
            for s in ann.alias_set:
                alias_of.setdefault(s, a.name)
        args.append(
            Arg(
                a.name,
                _type(a.type),
                a in schema.arguments.flat_kwarg_only,
                a.default is not None,
                bool(ann and ann.is_write),
            )
        )
    names = [n if n != "self" else "result" for n in t.return_names(f)]
    undiff = op in t.dont_require or op.rstrip("_") in t.dont_require
    if undiff:
        diff_out = set()
    elif info is None:
        diff_out = {n for n, r in zip(names, schema.returns) if r.type.is_tensor_like()}
    else:
        diff_out = {o.name if o.name != "self" else "result" for o in t.differentiable_outputs(fn)}
    outputs = []
    for name, r in zip(names, schema.returns):
        ann = r.annotation
        alias = next((alias_of[s] for s in ann.alias_set if s in alias_of), "") if ann else ""
        grad = name in diff_out and r.type.is_tensor_like()
        integral = (
            r.type.is_tensor_like()
            and not grad
            and f"{op}:{name}" not in S.FLOAT_NONDIFF
            and str(schema.name) not in S.FLOAT_NONDIFF
            and op not in S.FLOAT_NONDIFF
            and not (kind != "functional" and ann is not None and ann.is_write)
        )
        if str(r.type) in ("bool", "int", "bool[]", "int[]"):
            integral = True
        outputs.append(Output(name, _type(r.type), grad, integral, alias, bool(ann and ann.is_write)))
    tensor_inputs = [a.name for a in schema.arguments.flat_non_out if a.type.is_tensor_like()]
    grads, saves, facts = [], [], []
    any_grad_out = any(o.grad for o in outputs)
    composite = info is None and f.has_composite_implicit_autograd_kernel
    for name in tensor_inputs:
        if undiff or (not any_grad_out and not composite):
            status = NONE
        elif info is None:
            status = COMPOSITE if composite else RAISES
        else:
            der = next((d for d in info.derivatives if name in d.var_names), None)
            if der is None or name in info.non_differentiable_arg_names:
                status = NONE
            else:
                formula = der.original_formula.strip()
                if _is_zero(formula) or op.rstrip("_") in S.ZERO_FOR_REAL:
                    status = ZERO
                elif formula.startswith("not_implemented("):
                    status = RAISES
                else:
                    status = GRAD
                    facts += _divisor_facts(formula, set(tensor_inputs), f"derivatives.yaml: {formula}")
        grads.append((name, status))
    if info is not None and any(s != NONE for _, s in grads):
        diff_args = [n for n, s in grads if s in (GRAD, ZERO, RAISES)]
        has_list = any(
            "[]" in _type(a.type) and a.type.is_tensor_like()
            for a in schema.arguments.flat_non_out
            if a.name in diff_args
        )
        for attr in info.all_saved_inputs:
            if _is_tensor_save(attr) and attr.nctype.name in tensor_inputs:
                saves.append(Save(attr.nctype.name, False, _guard(info, attr, diff_args, has_list)))
        for attr in info.all_saved_outputs:
            if _is_tensor_save(attr) and attr.nctype.name in names:
                saves.append(Save(attr.nctype.name, True, tuple(diff_args)))
    py = bool(t.py_binding(f)) or op in S.MANUALLY_BOUND
    flags = _flags(f, kind, info is not None, py, has_out, t.view_functions)
    seen = set()
    domain = []
    for fact in [
        *facts,
        *D.HAND_DOMAINS.get(f"{op}.{overload}" if overload else op, ()),
        *(D.HAND_DOMAINS.get(op, ()) if overload else ()),
    ]:
        if fact[:3] not in seen:
            seen.add(fact[:3])
            domain.append(Domain(*fact))
    # torchgen builds some infos (_foreach) from sets: order the saves by argument position
    order = [a.name for a in args] + names
    saves = sorted(_dedup(saves), key=lambda sv: (sv.output, order.index(sv.value)))
    saves = [Save(sv.value, sv.output, tuple(sorted(sv.when, key=order.index))) for sv in saves]
    return Overload(op, overload, flags, tuple(args), tuple(outputs), tuple(grads), tuple(saves), (), tuple(domain))


def _dedup(saves):
    out: dict[tuple[str, bool], Save] = {}
    for s in saves:
        key = (s.value, s.output)
        if key in out:
            s = Save(s.value, s.output, tuple(dict.fromkeys(out[key].when + s.when)))
        out[key] = s
    return list(out.values())

"""Write `_table.py` from the tables torch generates its autograd from. Run by hand when torch is
upgraded (needs torch, whose wheel ships torchgen and the YAML files):

    python -m gradaudit.analysis.ops.generate            # rewrite analysis/ops/_table.py
    python -m gradaudit.analysis.ops.generate --check    # exit 1 when the committed table is stale

The YAML is read with torchgen's own loaders (`load_derivatives`, `parse_native_yaml`,
`match_differentiability_info`, `gen_differentiable_outputs`), so every formula, saved variable
and output is interpreted exactly as torch's code generator interprets it; the lists torchgen
keeps beside the YAML (DONT_REQUIRE_DERIVATIVE, VIEW_FUNCTIONS, the Python binding filter) are
read from it too. What neither has is in surface.py and domains.py.

How each fact is derived:
- differentiable inputs: the input has a formula in its derivatives.yaml entry (or in the entry
  of its functional form, for `op_` and `out=`); `zero` when the formula is `zeros_like(...)`;
  `none` when it is `non_differentiable`, absent, or no output carries gradient; `raises` for
  `not_implemented(...)` and for ops with neither a formula nor a CompositeImplicitAutograd
  kernel (autograd installs a NotImplemented node: backward raises); `composite` for ops without
  a formula whose CompositeImplicitAutograd kernel autograd sees through.
- saves: torchgen's SavedAttributes of type Tensor whose expression is the argument itself (not
  `self.sym_sizes()` or `self.scalar_type()`), with the condition torch's generated code guards
  the save with (gen_variable_type.guard_for: saved only when that input requires grad).
- outputs without gradient: gen_differentiable_outputs (output_differentiability, a single
  `grad` formula, non_differentiable names) and DONT_REQUIRE_DERIVATIVE; an output without
  gradient is integral (torch refuses gradients to integer and bool tensors only) unless
  surface.FLOAT_NONDIFF says otherwise.
- in-place / out= / views: the schema's alias annotations (`Tensor(a!)` written, `Tensor(a)`
  returned as an alias), the `inplace_view` tag, torchgen's VIEW_FUNCTIONS.
- domains: divisions by an input or the result and rsqrt/digamma of an input in the formulas,
  plus domains.HAND_DOMAINS.
"""
from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
from dataclasses import dataclass, replace

from . import domains as D
from . import surface as S
from .records import COMPOSITE, GRAD, NONE, RAISES, ZERO, Arg, Domain, Output, Overload, Save, encode

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_table.py")
SETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_engine_sets.py")

# python_module -> the Python namespace its function variants live in, and the prefix they drop
PY_MODULES = {None: ("torch", ""), "linalg": ("torch.linalg", "linalg_"), "special": ("torch.special", "special_"),
              "fft": ("torch.fft", "fft_"), "nn": ("torch._C._nn", "")}
F = "torch.nn.functional"
_PRIORITY = {RAISES: 4, GRAD: 3, COMPOSITE: 2, ZERO: 1, NONE: 0}
RESULT = object()  # marks the saved result of a decomposition


class GenerateError(Exception):
    pass


# --- torch's tables ----------------------------------------------------------------------------

@dataclass
class Torch:
    fns: list                  # torchgen NativeFunctionWithDifferentiabilityInfo
    dont_require: set
    view_functions: set
    py_binding: object         # should_generate_py_binding(NativeFunction) -> bool
    differentiable_outputs: object
    return_names: object
    context: object            # torchgen.context.native_function_manager
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
    return Torch(fns, set(DONT_REQUIRE_DERIVATIVE), set(VIEW_FUNCTIONS), should_generate_py_binding,
                 gen_differentiable_outputs, cpp.return_names, native_function_manager, ver.split("+")[0])


# --- one ATen overload --------------------------------------------------------------------------

def _type(t) -> str:
    s = str(t)
    s = s.replace("SymInt", "int")
    return re.sub(r"\[\d+\]", "[]", s)


_ZERO = re.compile(r"^(at::)?zeros(_like|_symint)?\(")


def _is_zero(formula: str) -> bool:
    """The whole formula is one `zeros_like(...)` / `at::zeros_symint(...)` call."""
    m = _ZERO.match(formula)
    return m is not None and _group(formula, m.end() - 1) is not None and formula.endswith(")") and _balanced(
        formula[m.end():-1])
_TENSOR_SAVE = re.compile(r"\bTensor\b|TensorList|SavedVariable")


def _is_tensor_save(attr) -> bool:
    return attr.expr == attr.nctype.name and bool(_TENSOR_SAVE.search(str(attr.nctype.type)))


def _guard(info, attr, diff_args: list[str], has_list: bool) -> tuple[str, ...]:
    """gen_variable_type.guard_for: the inputs whose need for a gradient makes torch save `attr`."""
    always = tuple(diff_args)
    if has_list or "backward" in info.name or len(diff_args) <= 1 or "TensorList" in str(attr.nctype.type) \
            or "Optional" in str(attr.nctype.type):
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

    for m in re.finditer(r"/|\.div\(|rsqrt\(", text):
        start = m.end()
        if text[start - 6:start] == "rsqrt(" and text[start - 7:start - 6] != ".":
            operand = _group(text, start - 1)
        elif m.group() == "/" or m.group() == ".div(":
            operand = _group(text, start - 1) if m.group() == ".div(" else _operand(text, start)
        else:
            continue
        hit = classify(operand) if operand else None
        if hit:
            out.append((hit[0], hit[1], "grad_inf", why))
    for m in re.finditer(r"\((.*?)\)\.rsqrt\(\)", text):
        inner = _innermost_suffix(text, m.start(), m.end() - len(".rsqrt()"))
        hit = classify(inner) if inner else None
        if hit:
            out.append((hit[0], hit[1], "grad_inf", why))
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
            inner = text[open_at + 1:i]
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
            return text[i + 1:close - 1]
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
    alias_of = {}
    for a in list(schema.arguments.flat_positional) + list(schema.arguments.flat_kwarg_only):
        ann = a.annotation
        if ann is not None:
            for s in ann.alias_set:
                alias_of.setdefault(s, a.name)
        args.append(Arg(a.name, _type(a.type), a in schema.arguments.flat_kwarg_only, a.default is not None,
                        bool(ann and ann.is_write)))
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
        integral = (r.type.is_tensor_like() and not grad and f"{op}:{name}" not in S.FLOAT_NONDIFF
                    and str(schema.name) not in S.FLOAT_NONDIFF and op not in S.FLOAT_NONDIFF
                    and not (kind != "functional" and ann is not None and ann.is_write))
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
        has_list = any("[]" in _type(a.type) and a.type.is_tensor_like()
                       for a in schema.arguments.flat_non_out if a.name in diff_args)
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
    for fact in [*facts, *D.HAND_DOMAINS.get(f"{op}.{overload}" if overload else op, ()),
                 *(D.HAND_DOMAINS.get(op, ()) if overload else ())]:
        if fact[:3] not in seen:
            seen.add(fact[:3])
            domain.append(Domain(*fact))
    # torchgen builds some infos (_foreach) from sets: order the saves by argument position
    order = [a.name for a in args] + names
    saves = sorted(_dedup(saves), key=lambda sv: (sv.output, order.index(sv.value)))
    saves = [Save(sv.value, sv.output, tuple(sorted(sv.when, key=order.index))) for sv in saves]
    return Overload(op, overload, flags, tuple(args), tuple(outputs), tuple(grads), tuple(saves),
                    (), tuple(domain))


def _dedup(saves):
    out: dict[tuple[str, bool], Save] = {}
    for s in saves:
        key = (s.value, s.output)
        if key in out:
            s = Save(s.value, s.output, tuple(dict.fromkeys(out[key].when + s.when)))
        out[key] = s
    return list(out.values())


# --- decompositions ---------------------------------------------------------------------------

_STEP = re.compile(r"^\s*([\w.]+)\((.*)\)\s*$")


def parse_steps(text: str) -> list[tuple[str, dict[str, str]]]:
    steps = []
    for part in text.split(";"):
        m = _STEP.match(part)
        if not m:
            raise GenerateError(f"bad step {part!r} in {text!r}")
        binds = {}
        for b in filter(None, (x.strip() for x in m.group(2).split(","))):
            k, _, v = b.partition("=")
            binds[k.strip()] = v.strip()
        steps.append((m.group(1), binds))
    return steps


def _combine(a: str, b: str) -> str:
    """The status of a path through two links."""
    for s in (NONE, RAISES, ZERO, COMPOSITE):
        if s in (a, b):
            return s
    return GRAD


def _best(statuses) -> str:
    return max(statuses, key=_PRIORITY.get, default=NONE)


class Builder:
    def __init__(self, t: Torch):
        self.t = t
        self.raw: dict[str, list[Overload]] = {}
        outs = set()
        from torchgen.model import SchemaKind
        for fn in t.fns:
            if fn.func.func.kind() == SchemaKind.out:
                outs.add(str(fn.func.func.signature(strip_default=True)))
        for fn in t.fns:
            schema = fn.func.func
            # out= forms are a flag of their functional op; named-tensor (Dimname) overloads are
            # left out: they repeat an overload taking an int dim
            if schema.kind() == SchemaKind.out or any("Dimname" in str(a.type) for a in schema.arguments.flat_all):
                continue
            has_out = str(schema.signature(strip_default=True)) in outs
            with t.context(fn.func):
                ov = aten_overload(t, fn, has_out)
            self.raw.setdefault(ov.op, []).append(ov)
        self.fns = {str(fn.func.func.name): fn.func for fn in t.fns}
        self.done: dict[str, Overload] = {}
        self.busy: set[str] = set()
        self.composed: dict[str, Overload] = {}   # surface key -> a decomposition
        self.needed: set[str] = set()

    # overload lookup
    def find(self, ref: str, bound=()) -> Overload:
        op, _, ovl = ref.partition(".")
        cands = self.raw.get(op)
        if not cands:
            raise GenerateError(f"no ATen op {op!r}")
        if "." in ref:
            hit = [o for o in cands if o.overload == ovl]
        else:
            hit = [o for o in cands if all(o.arg(b) is not None and o.arg(b).tensor for b in bound)]
            if len(hit) > 1:
                hit = [o for o in hit if o.overload == ""] or hit
        if len(hit) != 1:
            raise GenerateError(f"{ref}: {len(hit)} overloads fit {sorted(bound)}")
        return self.resolved(hit[0])

    def resolved(self, ov: Overload) -> Overload:
        """The overload with its decomposition applied (ATen composites)."""
        if ov.name in self.done:
            return self.done[ov.name]
        if ov.name in self.busy:
            raise GenerateError(f"decomposition cycle at {ov.name}")
        self.busy.add(ov.name)
        text = S.ATEN_DECOMPOSITIONS.get(ov.name)
        if text is None and ov.composite and ov.op in S.ALIASES:
            text = self._alias(ov, S.ALIASES[ov.op])
        if text is None and ov.composite:
            text = self._sibling(ov)
        if text is not None and ov.composite:
            out = self.compose(ov.op, ov.overload, ov.args, text, ov.flags, own=ov)
        else:
            out = ov
        self.busy.discard(ov.name)
        self.done[ov.name] = out
        return out

    def _alias(self, ov: Overload, target: str) -> str:
        """The target's overload of the same name, else the first with the same tensor inputs."""
        mine = [a.name for a in ov.args if a.tensor]
        cands = self.raw.get(target)
        if not cands:
            raise GenerateError(f"alias {ov.op} -> {target}: no such op")
        hit = next((o for o in cands if o.overload == ov.overload), None) or next(
            (o for o in cands if [a.name for a in o.args if a.tensor] == mine), None)
        if hit is None:
            raise GenerateError(f"alias {ov.name} -> {target}: no overload takes {mine}")
        theirs = [a.name for a in hit.args if a.tensor]
        if len(theirs) != len(mine):
            raise GenerateError(f"alias {ov.name} -> {hit.name}: tensor inputs {mine} vs {theirs}")
        # an alias takes the same inputs in the same order, under its own names (det(self) -> linalg_det(A))
        return f"{hit.name}({', '.join(f'{t}={m}' for t, m in zip(theirs, mine))})"

    def _sibling(self, ov: Overload) -> str | None:
        """ATen's composite overloads of one op forward to its overload with a formula (std.dim ->
        std.correction): the one non-composite functional sibling whose tensor inputs it has."""
        mine = [a.name for a in ov.args if a.tensor]
        sibs = [o for o in self.raw.get(ov.op, ()) if not o.composite and "i" not in o.flags and "u" not in o.flags
                and [a.name for a in o.args if a.tensor] == mine]
        if len(sibs) != 1 or not mine:
            return None
        sib = sibs[0]
        return f"{sib.name}({', '.join(f'{n}={n}' for n in mine)})"

    def compose(self, op: str, overload: str, params, text: str, flags: str, own: Overload | None = None) -> Overload:
        steps = parse_steps(text)
        pnames = {p.name for p in params}
        deps: list[dict[str, str]] = []      # per step: user param -> status of its first output
        aliases: list[set[str]] = []        # per step: user params its first output is a view of
        saves: dict[tuple[str, bool], set[str]] = {}
        domain = []
        unknown = False
        resolved = []
        for k, (ref, binds) in enumerate(steps):
            ov = self.find(ref, [b for b in binds])
            resolved.append(ov)
            if ov.composite and not ov.steps or "q" in ov.flags:
                unknown = True
            self.needed.add(ov.op)
            for a, src in binds.items():
                if ov.arg(a) is None:
                    raise GenerateError(f"{op}: {ov.name} has no parameter {a!r}")
                if src.startswith("@"):
                    if int(src[1:]) >= k:
                        raise GenerateError(f"{op}: step {k} reads {src}")
                elif src not in pnames:
                    raise GenerateError(f"{op}: {src!r} is not a parameter of {op} ({sorted(pnames)})")

            def sources(src):
                if src.startswith("@"):
                    j = int(src[1:])
                    return {p: s for p, s in deps[j].items()}, aliases[j]
                return {src: GRAD}, {src}

            dep: dict[str, list[str]] = {}
            for a, src in binds.items():
                st = ov.grad(a) or NONE
                flow, _ = sources(src)
                for p, s in flow.items():
                    dep.setdefault(p, []).append(_combine(st, s))
            deps.append({p: _best(v) for p, v in dep.items()})
            first = ov.outputs[0] if ov.outputs else None
            alias = set()
            if first is not None and first.alias and first.alias in binds and ("v" in ov.flags or "a" in ov.flags):
                alias = sources(binds[first.alias])[1]
            aliases.append(alias)
            last = k == len(steps) - 1
            for s in ov.saves:
                when = set()
                for w in s.when:
                    if w in binds:
                        flow, _ = sources(binds[w])
                        when |= {p for p, st in flow.items() if st != NONE}
                if not when:
                    continue
                if s.output:
                    # only the result the caller gets back can be changed in place by the caller
                    if last and ov.outputs and s.value == ov.outputs[0].name:
                        saves.setdefault((RESULT, True), set()).update(when)
                    continue
                if s.value in binds:
                    for p in sorted(sources(binds[s.value])[1]):
                        saves.setdefault((p, False), set()).update(when)
            for d in ov.domain:
                # a fact that also depends on another input (pow's exponent) only holds when
                # the caller chooses that input too
                if d.given and (d.given not in binds or binds[d.given].startswith("@")
                                or binds[d.given] == binds.get(d.arg)):
                    continue
                if d.arg in binds and not binds[d.arg].startswith("@"):
                    domain.append(replace(d, arg=binds[d.arg], given=binds[d.given] if d.given else ""))
                elif d.arg == "result" and last:
                    domain.append(d)
        last = resolved[-1]
        final = deps[-1]
        grads = []
        for p in params:
            if p.tensor:
                grads.append((p.name, final.get(p.name, NONE)))
        if own is not None:
            # the composite's own outputs, with what the ops it runs make of them
            outputs = tuple(replace(o, grad=last.outputs[i].grad, integral=last.outputs[i].integral)
                            if i < len(last.outputs) else o for i, o in enumerate(own.outputs))
        else:
            # a Python function returns the last op's (first) result
            first = last.outputs[0]
            outputs = (replace(first, name="result", alias=min(aliases[-1]) if aliases[-1] else ""),)
        out_name = outputs[0].name if outputs else "result"
        order = [p.name for p in params]
        save_list = sorted((Save(out_name if v is RESULT else v, out, tuple(sorted(w, key=order.index)))
                            for (v, out), w in saves.items()),
                           key=lambda sv: (sv.output, order.index(sv.value) if sv.value in order else 0))
        new_flags = "".join(c for c in flags if c not in "cvax") + "c" + ("q" if unknown else "")
        if all("v" in o.flags for o in resolved):
            new_flags += "v"
        elif all("v" in o.flags or "a" in o.flags for o in resolved):
            new_flags += "a"
        if own is not None and "x" in own.flags:
            new_flags += "x"
        seen, dom = set(), []
        for d in domain:
            if (d.arg, d.at, d.effect) not in seen:
                seen.add((d.arg, d.at, d.effect))
                dom.append(d)
        return Overload(op, overload, new_flags, tuple(params), outputs, tuple(grads), tuple(save_list),
                        tuple(o.name for o in resolved), tuple(dom))


# --- the surfaces users write -------------------------------------------------------------------

def _signature_args(fn, binds_used) -> tuple[Arg, ...]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if sig is None or any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        return tuple(Arg(n, "Tensor") for n in binds_used)
    out = []
    for p in sig.parameters.values():
        ann = str(p.annotation) if p.annotation is not p.empty else ""
        default = p.default is not p.empty
        if "Tensor" in ann or p.name in binds_used:
            typ = "Tensor?" if default and p.default is None else "Tensor"
        else:
            typ = next((t for t in ("bool", "int", "float", "str") if re.search(rf"\b{t}\b", ann)), "other")
        out.append(Arg(p.name, typ, p.kind == p.KEYWORD_ONLY, default))
    return tuple(out)


def _bound_sources(text: str) -> list[str]:
    out = []
    for _, binds in parse_steps(text):
        for v in binds.values():
            if not v.startswith("@") and v not in out:
                out.append(v)
    return out


class Surfaces:
    def __init__(self, b: Builder):
        self.b = b
        self.map: dict[str, dict[str, str]] = {}
        self.unmapped: dict[str, list[str]] = {}

    def add(self, ns: str, name: str, target: str):
        self.map.setdefault(ns, {})[name] = target

    def build(self):
        import torch
        import torch.nn as nn
        import torch.nn.functional as Fn
        b = self.b
        # ATen function and method variants, as torch's Python bindings expose them
        for op, ovs in sorted(b.raw.items()):
            for ov in ovs:
                if "x" in ov.flags:
                    continue
                fn = b.fns[ov.name]
                ns, prefix = PY_MODULES.get(fn.python_module, (None, None))
                if ns is None:
                    continue
                if "f" in ov.flags:
                    name = op[len(prefix):] if prefix and op.startswith(prefix) else op
                    self.add(ns, name, op)
                if "m" in ov.flags:
                    self.add("Tensor", op, op)
        # torch.* and Tensor methods written in Python
        for name, text in sorted(S.TORCH_PYTHON.items()):
            self.composite("torch", name, getattr(torch, name), text)
        for name, text in sorted(S.TENSOR_PYTHON.items()):
            self.composite("Tensor", name, None, text, params=(Arg("self", "Tensor"),))
        for name in S.INTEGRAL_CASTS:
            key = f"Tensor.{name}"
            self.b.composed[key] = Overload(key, "", "mc", (Arg("self", "Tensor"),),
                                            (Output("result", "Tensor", False, True),), (("self", NONE),), (),
                                            ("_to_copy",))
            self.add("Tensor", name, "=" + key)
        # operators
        for name, text in sorted(S.OPERATORS.items()):
            if "(" in text:
                self.composite("operator", name, None, text, params=(Arg("self", "Tensor"), Arg("other", "Tensor")))
            else:
                if text not in b.raw:
                    raise GenerateError(f"operator {name}: no ATen op {text}")
                self.add("operator", name, text)
        # torch.nn.functional
        for name in sorted(dir(Fn)):
            fn = getattr(Fn, name)
            if name.startswith("_") or not callable(fn) or isinstance(fn, type):
                continue
            if name in S.FUNCTIONAL:
                real = fn
                if "*args" in str(_safe_sig(fn)) and hasattr(Fn, f"_{name}"):
                    real = getattr(Fn, f"_{name}")
                self.composite(F, name, real, S.FUNCTIONAL[name])
            elif type(fn).__name__ == "builtin_function_or_method" and fn.__name__ in b.raw:
                self.add(F, name, fn.__name__)
            elif getattr(fn, "__module__", "") == F:
                self.unmapped.setdefault(F, []).append(name)
        for name in S.FUNCTIONAL:
            if not callable(getattr(Fn, name, None)):
                raise GenerateError(f"F.{name} is not in torch.nn.functional")
        # torch.nn modules
        for name, text in sorted(S.MODULES.items()):
            cls = getattr(nn, name, None)
            if not isinstance(cls, type):
                raise GenerateError(f"nn.{name} is not in torch.nn")
            self.module(name, cls, text)

    def composite(self, ns: str, name: str, fn, text: str, params=None):
        if params is None:
            params = _signature_args(fn, _bound_sources(text))
        key = f"{ns}.{name}" if ns != "operator" else f"operator.{name}"
        ov = self.b.compose(key, "", params, text, "fm" if ns == "Tensor" else "f")
        self.b.composed[key] = ov
        self.add(ns, name, "=" + key)

    def module(self, name: str, cls, text: str):
        """`F.x(param=source)`: one call of an F function, a module parameter where source is `.p`."""
        m = _STEP.match(text)
        target, binds = m.group(1), dict(
            (k.strip(), v.strip()) for k, _, v in (x.partition("=") for x in m.group(2).split(",")))
        fwd = [Arg(p.name, "Tensor") for p in list(inspect.signature(cls.forward).parameters.values())[1:]
               if p.kind == p.POSITIONAL_OR_KEYWORD]
        params = list(fwd) + [Arg(v[1:], "Parameter") for v in binds.values() if v.startswith(".")]
        inner = {k: (v[1:] if v.startswith(".") else v) for k, v in binds.items()}
        for v in inner.values():
            if v not in {p.name for p in params}:
                raise GenerateError(f"nn.{name}: forward() has no parameter {v!r}")
        if target.startswith("F."):
            fname = target[2:]
            dest = self.map.get(F, {}).get(fname)
            if dest is None:
                raise GenerateError(f"nn.{name}: F.{fname} is not mapped")
            if dest.startswith("="):
                # re-bind the F function's parameters to the module's
                callee = self.b.composed[dest[1:]]
                text = self._rebind(callee, inner, f"F.{fname}")
            else:
                text = f"{dest}({', '.join(f'{k}={v}' for k, v in inner.items())})"
        else:
            text = f"{target}({', '.join(f'{k}={v}' for k, v in inner.items())})"
        key = f"nn.{name}"
        self.b.composed[key] = self.b.compose(key, "", tuple(params), text, "")
        self.add("torch.nn", name, "=" + key)

    def _rebind(self, callee: Overload, inner: dict[str, str], label: str) -> str:
        """The F function's own steps, its parameters replaced by the module's sources."""
        for k in inner:
            if callee.arg(k) is None:
                raise GenerateError(f"{label} has no parameter {k!r}")
        src = {"torch.nn.functional": S.FUNCTIONAL}[F].get(label[2:])
        steps = parse_steps(src)
        parts = []
        for ref, binds in steps:
            new = {}
            for a, v in binds.items():
                if v.startswith("@"):
                    new[a] = v
                elif v in inner:
                    new[a] = inner[v]
            parts.append(f"{ref}({', '.join(f'{a}={v}' for a, v in new.items())})")
        return " ; ".join(parts)


def _safe_sig(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return ""


# --- the table ----------------------------------------------------------------------------------

def build() -> tuple[dict, dict, dict, str, dict]:
    t = load_torch()
    b = Builder(t)
    s = Surfaces(b)
    s.build()
    # the ATen ops kept: public names exposed to Python, and whatever a decomposition runs
    keep = set()
    for ns, names in s.map.items():
        for target in names.values():
            if not target.startswith("="):
                keep.add(target)
    for op, ovs in b.raw.items():
        if not op.startswith("_") and any("x" not in o.flags for o in ovs):
            fn = b.fns[ovs[0].name]
            if fn.python_module in (None, "nn", "linalg", "special", "fft"):
                keep.add(op)
    # the ops kept, their decompositions resolved, and every op a decomposition runs
    aten: dict[str, list[Overload]] = {}
    queue = sorted(keep) + [step.split(".")[0] for ov in b.composed.values() for step in ov.steps]
    while queue:
        op = queue.pop()
        if op in aten:
            continue
        aten[op] = [b.resolved(o) for o in b.raw[op]]
        queue += [step.split(".")[0] for ov in aten[op] for step in ov.steps]
    return aten, b.composed, s.map, t.version, s.unmapped


def _block(name: str, lines: list[str]) -> list[str]:
    for line in lines:
        if "\\" in line or '"""' in line or "\n" in line:
            raise GenerateError(f"{name}: a line the table cannot hold: {line!r}")
    return [f'{name} = """'] + lines + ['"""', ""]


def render_table(ops: dict[str, list[Overload]], surfaces, version) -> str:
    op_lines, dom_lines = [], []
    for op in sorted(ops):
        for ov in ops[op]:
            op_lines.append(encode(ov))
            for d in ov.domain:
                why = " ".join(d.why.split())
                dom_lines.append("\t".join((op, ov.overload, d.arg, d.at, d.effect, why, d.given)))
    surf = sorted(f"{ns}|{name}|{target}" for ns, names in surfaces.items() for name, target in names.items())
    lines = [
        f'"""Generated by `python -m gradaudit.analysis.ops.generate` from torch {version}: do not edit.',
        "",
        "OPS: one line per overload (format: records.py), grouped by op. DOMAINS: op, overload, input,",
        "condition, effect, why, the other input it depends on (tab-separated). SURFACES: namespace|name users write|op (`=key`: a",
        "decomposition, itself in OPS). Loaded on the first lookup (analysis/ops/__init__.py).",
        '"""',
        f"TORCH_VERSION = {version!r}",
        "",
        *_block("OPS", op_lines),
        *_block("DOMAINS", dom_lines),
        *_block("SURFACES", surf),
        f"AST_OPERATORS = {dict(sorted(S.AST_OPERATORS.items()))!r}",
        "",
        f"MAY_RETURN_SELF = {dict(sorted(S.MAY_RETURN_SELF.items()))!r}",
        "",
    ]
    return "\n".join(lines)


def render_sets(sets: dict, version: str) -> str:
    lines = [
        f'"""Generated by `python -m gradaudit.analysis.ops.generate` from torch {version}: do not edit.',
        "",
        "The engine's name sets (facade.py says how each is derived), imported by torch_api.py.",
        '"""',
        "",
    ]
    for key in sorted(sets):
        value = sets[key]
        if isinstance(value, dict):
            lines.append(f"{key} = {{")
            lines += [f"    {k!r}: {value[k]!r}," for k in sorted(value)]
            lines.append("}")
        else:
            lines.append(f"{key} = frozenset({{")
            items = sorted(value)
            for i in range(0, len(items), 6):
                lines.append("    " + " ".join(f"{n!r}," for n in items[i:i + 6]))
            lines.append("})")
        lines.append("")
    return "\n".join(lines)


def outputs() -> dict[str, str]:
    """{path: text} of every generated file."""
    from . import make_opinfo
    from .facade import engine_sets
    aten, composed, surfaces, version, _ = build()
    ops = {**aten, **{k: [v] for k, v in composed.items()}}

    def lookup(ns, name):
        target = surfaces.get(ns, {}).get(name)
        if target is None:
            return None
        return make_opinfo(ns, name, target, tuple(ops[target.lstrip("=")]))

    names = {ns: frozenset(m) for ns, m in surfaces.items()}
    sets = engine_sets(lookup, names, frozenset(surfaces.get("torch.nn", ())))
    return {TABLE: render_table(ops, surfaces, version), SETS: render_sets(sets, version)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gradaudit.analysis.ops.generate",
                                 description="Regenerate the op table from the installed torch.")
    ap.add_argument("--check", action="store_true", help="exit 1 when a committed file differs")
    args = ap.parse_args(argv)
    files = outputs()
    stale = []
    for path, text in files.items():
        try:
            with open(path, encoding="utf-8") as fh:
                old = fh.read()
        except OSError:
            old = None
        if old != text:
            stale.append(path)
            if not args.check:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
    if args.check:
        for path in stale:
            print(f"{os.path.relpath(path)} is stale: run python -m gradaudit.analysis.ops.generate", file=sys.stderr)
        return 1 if stale else 0
    for path in files:
        print(f"{'wrote' if path in stale else 'unchanged'} {os.path.relpath(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Decompositions (what a composite op, an F.* function, an operator or an nn module runs, as
ATen steps) and the surfaces users write, composed into overloads with the same fields as an
ATen op's. Generation time only (imports torch to read F's and modules' signatures).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any

from . import surface as S
from .aten import Torch, aten_overload, load_torch
from .records import COMPOSITE, GRAD, NONE, RAISES, ZERO, Arg, Output, Overload, Save

# python_module -> the Python namespace its function variants live in, and the prefix they drop
PY_MODULES = {
    None: ("torch", ""),
    "linalg": ("torch.linalg", "linalg_"),
    "special": ("torch.special", "special_"),
    "fft": ("torch.fft", "fft_"),
    "nn": ("torch._C._nn", ""),
}
F = "torch.nn.functional"
_PRIORITY = {RAISES: 4, GRAD: 3, COMPOSITE: 2, ZERO: 1, NONE: 0}
RESULT = object()  # marks the saved result of a decomposition


class GenerateError(Exception):
    pass


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


def _best(statuses: Iterable[str]) -> str:
    return max(statuses, key=_PRIORITY.__getitem__, default=NONE)


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
        self.composed: dict[str, Overload] = {}  # surface key -> a decomposition
        self._check_hand_tables()

    def _check_hand_tables(self):
        """Every op surface.py names exists, and needs what it says (a decomposition only for an
        op without its own formula)."""
        overloads = {ov.name: ov for ovs in self.raw.values() for ov in ovs}
        for name in S.ATEN_DECOMPOSITIONS:
            ov = overloads.get(name)
            if ov is None or not ov.composite:
                raise GenerateError(
                    f"ATEN_DECOMPOSITIONS[{name!r}]: "
                    + ("no such ATen overload" if ov is None else "it has a formula of its own")
                )
        for alias, target in S.ALIASES.items():
            if alias not in self.raw or target not in self.raw:
                raise GenerateError(f"ALIASES[{alias!r}] = {target!r}: no such ATen op")
            if not all(ov.composite for ov in self.raw[alias]):
                raise GenerateError(f"ALIASES[{alias!r}]: it has a formula of its own")
        for group, names in (
            ("MANUALLY_BOUND", S.MANUALLY_BOUND),
            ("SHAPE_ONLY", S.SHAPE_ONLY),
            ("ZERO_FOR_REAL", S.ZERO_FOR_REAL),
        ):
            for name in names:
                if name not in self.raw:
                    raise GenerateError(f"{group}: no ATen op {name!r}")
        for key in S.FLOAT_NONDIFF:
            op, _, out = key.partition(":")
            if op not in self.raw and op not in overloads:
                raise GenerateError(f"FLOAT_NONDIFF: no ATen op {op!r}")

    # overload lookup
    def find(self, ref: str, bound=()) -> Overload:
        op, _, ovl = ref.partition(".")
        cands = self.raw.get(op)
        if not cands:
            raise GenerateError(f"no ATen op {op!r}")
        if "." in ref:
            hit = [o for o in cands if o.overload == ovl]
        else:
            hit = [o for o in cands if all((a := o.arg(b)) is not None and a.tensor for b in bound)]
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
            (o for o in cands if [a.name for a in o.args if a.tensor] == mine), None
        )
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
        sibs = [
            o
            for o in self.raw.get(ov.op, ())
            if not o.composite
            and "i" not in o.flags
            and "u" not in o.flags
            and [a.name for a in o.args if a.tensor] == mine
        ]
        if len(sibs) != 1 or not mine:
            return None
        sib = sibs[0]
        return f"{sib.name}({', '.join(f'{n}={n}' for n in mine)})"

    def compose(self, op: str, overload: str, params, text: str, flags: str, own: Overload | None = None) -> Overload:
        steps = parse_steps(text)
        pnames = {p.name for p in params}
        deps: list[dict[str, str]] = []  # per step: user param -> status of its first output
        aliases: list[set[str]] = []  # per step: user params its first output is a view of
        saves: dict[tuple[object, bool], set[str]] = {}  # (input name or RESULT, output)
        domain = []
        unknown = False
        resolved = []
        for k, (ref, binds) in enumerate(steps):
            ov = self.find(ref, list(binds))
            resolved.append(ov)
            if (ov.composite and not ov.steps) or "q" in ov.flags:
                unknown = True
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
                    return dict(deps[j].items()), aliases[j]
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
                if d.given and (
                    d.given not in binds or binds[d.given].startswith("@") or binds[d.given] == binds.get(d.arg)
                ):
                    continue
                if d.arg in binds and not binds[d.arg].startswith("@"):
                    domain.append(d._replace(arg=binds[d.arg], given=binds[d.given] if d.given else ""))
                elif d.arg == "result" and last:
                    domain.append(d)
        last_ov = resolved[-1]
        final = deps[-1]
        grads = []
        for p in params:
            if p.tensor:
                grads.append((p.name, final.get(p.name, NONE)))
        if own is not None:
            # the composite's own outputs, with what the ops it runs make of them
            outputs = tuple(
                o._replace(grad=last_ov.outputs[i].grad, integral=last_ov.outputs[i].integral)
                if i < len(last_ov.outputs)
                else o
                for i, o in enumerate(own.outputs)
            )
        else:
            # a Python function returns the last op's (first) result
            first = last_ov.outputs[0]
            outputs = (first._replace(name="result", alias=min(aliases[-1]) if aliases[-1] else ""),)
        out_name = outputs[0].name if outputs else "result"
        order = [p.name for p in params]
        save_list = sorted(
            (
                Save(v if isinstance(v, str) else out_name, out, tuple(sorted(w, key=order.index)))
                for (v, out), w in saves.items()
            ),
            key=lambda sv: (sv.output, order.index(sv.value) if sv.value in order else 0),
        )
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
        return Overload(
            op,
            overload,
            new_flags,
            tuple(params),
            outputs,
            tuple(grads),
            tuple(save_list),
            tuple(o.name for o in resolved),
            tuple(dom),
        )


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
        self.reductions: dict[str, str] = {}  # decomposition key -> default `reduction`

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
                # private names (torch._foreach_add, Tensor._values) are internals, not what
                # training code writes; an op a decomposition runs stays reachable as `aten`
                if "x" in ov.flags or (op.startswith("_") and not op.startswith("__")):
                    continue
                fn = b.fns[ov.name]
                ns, prefix = PY_MODULES.get(fn.python_module, (None, None))
                if ns is None:
                    continue
                if "f" in ov.flags:
                    name = op[len(prefix) :] if prefix and op.startswith(prefix) else op
                    self.add(ns, name, op)
                if "m" in ov.flags:
                    self.add("Tensor", op, op)
        # torch.* and Tensor methods written in Python
        for group, names, owner in (
            ("TORCH_PYTHON", S.TORCH_PYTHON, torch),
            ("TENSOR_PYTHON", S.TENSOR_PYTHON, torch.Tensor),
            ("INTEGRAL_CASTS", S.INTEGRAL_CASTS, torch.Tensor),
            ("MAY_RETURN_SELF", S.MAY_RETURN_SELF, torch.Tensor),
            ("OPERATORS", S.OPERATORS, torch.Tensor),
        ):
            missing = [n for n in names if not hasattr(owner, n)]
            if missing:
                raise GenerateError(f"{group}: {owner.__name__} has no {', '.join(missing)}")
        for name, text in sorted(S.TORCH_PYTHON.items()):
            self.composite("torch", name, getattr(torch, name), text)
        for name, text in sorted(S.TENSOR_PYTHON.items()):
            self.composite("Tensor", name, None, text, params=(Arg("self", "Tensor"),))
        for name in S.INTEGRAL_CASTS:
            key = f"Tensor.{name}"
            self.b.composed[key] = Overload(
                key,
                "",
                "mc",
                (Arg("self", "Tensor"),),
                (Output("result", "Tensor", False, True),),
                (("self", NONE),),
                (),
                ("_to_copy",),
            )
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
        self._reduction(key, fn)
        ov = self.b.compose(key, "", params, text, "fm" if ns == "Tensor" else "f")
        self.b.composed[key] = ov
        self.add(ns, name, "=" + key)

    def _reduction(self, key: str, fn):
        """A loss's default `reduction` ('mean', 'sum', 'none'), read from torch's own signature."""
        sig = _safe_sig(fn) if fn is not None else None
        if sig is not None and "reduction" in sig.parameters:
            default = sig.parameters["reduction"].default
            if isinstance(default, str):
                self.reductions[key] = default

    def module(self, name: str, cls, text: str):
        """`F.x(param=source)`: one call of an F function, a module parameter where source is `.p`."""
        self._reduction(f"nn.{name}", cls.__init__)
        m = _STEP.match(text)
        if m is None:
            raise GenerateError(f"nn.{name}: {text!r} is not `F.x(param=source, ...)`")
        target, binds = (
            m.group(1),
            {k.strip(): v.strip() for k, _, v in (x.partition("=") for x in m.group(2).split(","))},
        )
        fwd = [
            Arg(p.name, "Tensor")
            for p in list(inspect.signature(cls.forward).parameters.values())[1:]
            if p.kind == p.POSITIONAL_OR_KEYWORD
        ]
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
        if src is None:
            raise GenerateError(f"{label} has no decomposition in surface.FUNCTIONAL")
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


def _safe_sig(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


# --- the table ----------------------------------------------------------------------------------


def build() -> tuple[dict, dict, dict, str, dict, dict]:
    t = load_torch()
    b = Builder(t)
    s = Surfaces(b)
    s.build()
    # the ATen ops kept: public names exposed to Python, and whatever a decomposition runs
    keep = set()
    for _ns, names in s.map.items():
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
    return aten, b.composed, s.map, t.version, s.unmapped, s.reductions

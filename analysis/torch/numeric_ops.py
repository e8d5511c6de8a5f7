"""Numerical hazards as the interpreter replays ops (GA401-GA408): the value facts of
numerics.py applied to each op's result, and the hazards recorded where they arise.

Called by the op handlers of tensors.py and modules.py with each op's result.
"""

from __future__ import annotations

import ast
import math
from typing import TypeGuard

from ..interp import recording
from ..interp.core import Core
from ..interp.objects import Obj, Site, TensorObj, storages
from ..interp.trace import CONFIRMED, SUSPICIOUS, RiskRec
from ..interp.values import EMPTY, NONE, Fact, Kind, Mark, V, const, requires_grad
from ..ops import torch_api as T
from . import numerics as N

_UNSAFE_CALLS = T.LOGS | T.ROOTS


def hazard(ip: Core, code, node, detail, confidence, latent=False, constant=False, inf_sign=0) -> RiskRec:
    rec = RiskRec(code, Site(ip.st.sf, node), detail, confidence, ip.st.ctx, latent, constant, inf_sign)
    if not latent:
        ip.st.trace.risks.append(rec)
    return rec


def set_default_dtype(ip: Core, qual, args, kwargs, node, env) -> V:
    """`torch.set_default_dtype(torch.float64)` (or the DoubleTensor default type): float tensors made
    from here on are float64."""
    arg = args[0] if args else kwargs.get("d", kwargs.get("t"))
    if isinstance(arg, V) and isinstance(arg.const, str):
        ip.st.default_f64 = _is_float64(arg.const)
    return NONE


def _is_float64(name: str) -> bool:
    return name in T.FLOAT64_NAMES or name.endswith("DoubleTensor")


def dtype_facts(op: str, ins: list[V], kwargs: dict, facts: int) -> int:
    """F64 / F32 after a dtype conversion (`.double()`, `.float()`, `.to(torch.float64)`)."""
    names: tuple[str, ...] = ()
    if op in T.TO_FLOAT64:
        names = ("torch.float64",)
    elif op in T.TO_NARROW_FLOAT:
        names = ("torch.float32",)
    elif op in T.TO_DTYPE_ARG or "dtype" in kwargs:
        dtype = kwargs.get("dtype")
        cands = [dtype] if isinstance(dtype, V) else ins[1:]
        names = tuple(v.const for v in cands if isinstance(v, V) and isinstance(v.const, str))
    for name in names:
        if _is_float64(name):
            return (facts | Fact.F64) & ~Fact.F32
        if name in T.NARROW_FLOAT_NAMES or name.endswith(("FloatTensor", "HalfTensor")):
            return (facts | Fact.F32) & ~Fact.F64
    return facts


def numeric(ip: Core, op, inputs, node, out: V, kwargs=None, biased: bool = False) -> V:
    """Set `out`'s numerical facts from op `op` on `inputs`, and record the hazards it creates.
    `biased`: a layer's forward that adds a bias (numerics.marks_of)."""
    if op is None:
        return out
    ins = [v for v in inputs if isinstance(v, V)]
    kwargs = kwargs or {}
    x = ins[0] if ins else None
    # where rows of per-group values go: kept with grad mode off too (features computed under
    # no_grad, then a probe trained on them)
    if op == "repeat_interleave" and x is not None:
        out = _repeat_rows(x, ins[1] if len(ins) > 1 else kwargs.get("repeats"), ins, kwargs, out)
    elif op in T.SCATTER_SUMS and len(ins) > 3:
        scatter_rows(ins[0], ins[2], out)
    elif op in T.ELEMENTWISE and x is not None:
        _keep_rows(ins, out)
    if op in T.SELECTIONS:
        out = out.replace(marks=out.marks | Mark.PICKED)
    if ip.st.nograd is not None and op not in T.KEEP:
        return out
    if op in T.SUMS and ins:
        _sum_of(ins[0], out)
    if op in T.ARITH_OPS and len(ins) >= 2:
        # x.pow(2), x.div(y), torch.mul(a, b): the operators' facts
        marks, facts = N.arith(T.ARITH_OPS[op], ins[0], ins[1], False, False)
    else:
        wide = x is not None and bool(x.facts & Fact.F64 or (ip.st.default_f64 and not x.facts & Fact.F32))
        marks, facts = N.marks_of(op, ins, biased, wide)
        facts = dtype_facts(op, ins, kwargs, facts)
        if marks & Mark.SQUARES and op in T.SUMS and len(ins) < 2 and "dim" not in kwargs and "axis" not in kwargs:
            # summed over everything (a mean squared error): one number, 0 only if every element is
            marks &= ~Mark.SQUARES
        elif marks & Mark.SQUARES and op in T.SUMS and not marks & Mark.DENSE and not facts & Fact.POSITIVE:
            # a squared norm written by hand, per row (a signal's energy `(s ** 2).sum(1)`): 0 for a
            # zero row (a silent reference), as `.norm()` is, for a log or a division too
            marks |= Mark.ZERO
    risks = set()
    if x is not None:
        if op in T.LOGS:
            if N.risky(x):
                what = (
                    "a softmax probability"
                    if x.marks & Mark.PROB
                    else "a sigmoid output"
                    if x.marks & Mark.SIGM
                    else "a value that can be exactly 0"
                )
                risks.add(
                    hazard(
                        ip,
                        "GA401",
                        node,
                        what,
                        CONFIRMED if x.marks & Mark.SELF else SUSPICIOUS,
                        constant=not requires_grad(x),
                    )
                )
            elif (
                x.marks & Mark.RAW
                and not x.marks & (Mark.EXP | Mark.LOG1PEXP)
                and not x.facts & (Fact.POSITIVE | Fact.NONNEG)
                and requires_grad(x)
            ):
                # `-torch.log(critic(x))` of a critic with no sigmoid: a layer's raw output is
                # unbounded, log is NaN where it is negative and -inf at 0
                risks.add(hazard(ip, "GA401", node, "raw activations (a layer's unbounded output)", SUSPICIOUS))
            if x.marks & Mark.LOG1PEXP:
                risks |= promote(ip, x, "exp", "GA404", "log(1 + exp(x))")
            elif x.marks & Mark.EXP and requires_grad(x):
                # `exp(s).sum(1).log()`, a hand-written logsumexp: inf where exp(s) overflows. The
                # last exp met is the one summed (an earlier exp of a log-variance inside `s` is not)
                risks |= promote(ip, x, "exp", "GA404", "log(exp(x).sum()), a hand-written logsumexp", last=True)
        elif op == "log1p" and x.marks & Mark.EXP:
            risks |= promote(ip, x, "exp", "GA404", "log(1 + exp(x))")
        elif op in T.ROOTS and N.risky_under_root(x) and requires_grad(x):
            # sqrt(0) is fine forward; only its derivative is infinite, and backward() evaluates
            # it only for an input that requires grad (not a constant target's norm)
            risks.add(hazard(ip, "GA403", node, op, CONFIRMED if x.marks & Mark.SELF else SUSPICIOUS))
        elif (
            op in T.FRACTIONAL_POWERS
            and len(ins) > 1
            and isinstance(ins[1].const, float)
            and 0 < ins[1].const < 1
            and N.risky_under_root(x)
            and requires_grad(x)
        ):
            risks.add(
                hazard(ip, "GA403", node, f"pow({ins[1].const})", CONFIRMED if x.marks & Mark.SELF else SUSPICIOUS)
            )
        elif op in T.ZERO_DIVISOR_INF and len(ins) > 1:
            risks |= check_division(ip, x, ins[1], node)
        elif op == "exp" and x.marks & Mark.LOGITS:
            marks |= Mark.EXP
            risks.add(hazard(ip, "exp", node, "exp of raw activations", SUSPICIOUS, latent=True))
        elif op in T.SOFTMAXES:
            risks |= promote(ip, x, "neginf", "GA406", op)
        elif op.removesuffix("_") == "masked_fill" and len(ins) > 2:
            value = ins[2] if len(ins) > 2 else kwargs.get("value")
            mask = ins[1]
            if isinstance(value, V) and value.const == float("-inf") and not mask.marks & Mark.CAUSAL:
                marks |= x.marks & N.NUMERIC_MARKS
                risks.add(hazard(ip, "neginf", node, "masked_fill with -inf", SUSPICIOUS, latent=True))
            else:
                marks |= x.marks & N.NUMERIC_MARKS
        if op in T.LOWER_CLAMPS:
            lo = kwargs.get("min", ins[1] if len(ins) > 1 else None)
            lo_c = lo.const if isinstance(lo, V) else None
            if N.positive_const(lo_c):
                # clamped away from 0: no longer a sum of squares a root would make a norm of
                marks, facts = marks & ~(N.RISKY | Mark.LOGITS | Mark.SQUARES), facts | Fact.POSITIVE
            elif lo_c == 0:
                marks |= Mark.ZERO
            elif lo is None or (lo_c is None and lo.k & Kind.NONE):
                # an upper bound alone (`probs.clamp(max=1 - 1e-20)`, ACER): the low end is the
                # input's, a probability still 0 where it underflowed, its log a log-probability
                marks |= x.marks & (N.RISKY | Mark.LOGP)
                facts |= x.facts & (Fact.ALL_PROB | Fact.ALL_SIGM)
        elif op == "clamp_max":
            marks |= x.marks & (N.RISKY | Mark.LOGP)
            facts |= x.facts & (Fact.ALL_PROB | Fact.ALL_SIGM)
        elif (
            op in T.ELEMENT_MAXIMA and len(ins) > 1 and (N.positive_const(ins[1].const) or ins[1].facts & Fact.POSITIVE)
        ):
            marks, facts = marks & ~(N.RISKY | Mark.SQUARES), facts | Fact.POSITIVE
        if op in T.UPPER_CLAMPS and _reaches_unit_bound(ins, kwargs):
            # `cos.clamp(-1, 1)`: a cosine held within [-1, 1] that reaches a bound, so `1 - cos ** 2`
            # is exactly 0 there (ArcFace's sin = sqrt(1 - cos^2) of a clamped cosine)
            marks = (marks & ~(Mark.LOGITS | Mark.SQUARES)) | Mark.UNIT
    if x is not None and out.carries and op in T.NAN_READING and any(v.marks & Mark.DATA_MIX for v in ins):
        risks.add(_nan_read(ip, node, op))
        marks &= ~Mark.DATA_MIX
    if x is not None and (
        op in T.NAN_DROPPING
        or (op.removesuffix("_") in T.MASK_SELECTIONS and len(ins) > 1 and ins[1].marks & Mark.NAN_TEST)
    ):
        dropped, clean = drop_nan(ip, out, (x,), op, node.args[2:] if isinstance(node, ast.Call) else ())
        risks |= dropped
        facts |= clean
    if op in T.CLAMPS and x is not None and x.risks:
        out = _clamped_infinities(x, ins, kwargs, op, node, out)
    if risks and op in T.ZERO_DIVISOR_INF and len(ins) > 1:
        _rows_of_division(ins[0], ins[1], risks, out)
    if not marks and not facts and not risks:
        return out
    return out.replace(
        marks=(out.marks & (Mark.SCALED | Mark.SAMPLED)) | marks,
        facts=out.facts | facts,
        risks=out.risks | frozenset(risks) if risks else out.risks,
    )


def promote(ip: Core, v: V, latent: str, code: str, detail: str, last: bool = False) -> set:
    """Turn the latent hazards of `v` (an exp of logits, a -inf mask) into `code` at their site;
    `last`: only the one met last."""
    out = set()
    found = [r for r in v.risks if r.latent and r.code == latent]
    if last and found:
        found = [max(found, key=lambda r: r.seq)]
    for r in found:
        rec = RiskRec(code, r.site, detail, SUSPICIOUS, r.ctx)
        ip.st.trace.risks.append(rec)
        out.add(rec)
    return out


def _mentions_nan(nodes) -> bool:
    """A replacement that is itself NaN (`torch.where(mask, torch.tensor(float('nan')), loss)`)."""
    return any(
        (isinstance(n, ast.Name) and n.id == "nan")
        or (isinstance(n, ast.Attribute) and n.attr == "nan")
        or (isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.lower() == "nan")
        for e in nodes
        for n in ast.walk(e)
    )


def _reads_no_nan(left: V, right: V) -> bool:
    """`p_teacher * (log_p_teacher - log_q)`: a product's backward reads each factor only for the
    other's gradient; the difference that may hold the data's NaN is read for a factor that takes
    none (data), and its own gradient is that factor times the incoming one, finite."""
    if left.marks & right.marks & Mark.DATA_MIX:
        return False  # (pred - y) * (pred - y): each is read for the other
    other = right if left.marks & Mark.DATA_MIX else left
    return not other.carries


def _nan_read(ip: Core, node, op: str) -> RiskRec:
    """An op whose backward reads a value that may hold the data's NaN (Mark.DATA_MIX): latent until
    the NaN is dropped from what it computes (drop_nan)."""
    return hazard(ip, "nanread", node, op, SUSPICIOUS, latent=True)


def drop_nan(ip: Core, out: V, dropped, how: str, put_back=()) -> tuple[frozenset, int]:
    """`torch.nanmean(loss)`, `loss[~torch.isnan(loss)]`, `torch.where(torch.isnan(l), 0, l)`: the
    NaN entries of `dropped` are dropped after the fact. The forward is finite, but when `out` carries
    gradient the ops that read the NaN in backward multiply the zero gradient of those entries by it:
    0 * NaN = NaN (GA405, at each such op). Returns those hazards, and Fact.NAN_FREE unless what is
    put in their place (`put_back`, the nodes written for it) is NaN again."""
    risks: set = set()
    if out.carries:
        for v in dropped:
            risks |= promote(ip, v, "nanread", "GA405", f"nan dropped by {how}")
    return frozenset(risks), 0 if _mentions_nan(put_back) else Fact.NAN_FREE


def loss_reads(ip: Core, op, argv, node, out: V) -> V:
    """A loss of a prediction against its target (`mse_loss(pred, y, reduction='none')`): one that
    reads them in backward reads a NaN of the target (l1_loss does not: it takes the sign)."""
    if op is None or op not in T.NAN_READING or not out.carries:
        return out
    xs = [v for v in argv[:2] if isinstance(v, V)]
    mixed = any(v.marks & Mark.DATA_MIX for v in xs) or (len(xs) == 2 and N.data_mix("sub", xs[0], xs[1]))
    if not mixed:
        return out
    return out.replace(risks=out.risks | {_nan_read(ip, node, op)}, marks=out.marks & ~Mark.DATA_MIX)


def _sum_of(x: V, out: V) -> None:
    """A sum of `x`: the count of `x` when it is a mask, gated as `x` is."""
    parts = storages(x)
    if not parts:
        return
    gate = frozenset.intersection(*(getattr(t, "gate", EMPTY) for t in parts))
    for t in storages(out):
        if isinstance(t, TensorObj) and t not in parts:
            t.counts = frozenset(parts)
            t.gate = gate


def gate_where(cond: V, kept: V, other: V, out: V) -> None:
    """`torch.where(mask, x, c)` with a `c` that carries no gradient: the result's gradient
    reaches `x` only where the mask holds."""
    if requires_grad(other) or not requires_grad(kept):
        return
    mask = frozenset(storages(cond))
    for t in storages(out):
        if isinstance(t, TensorObj):
            t.gate = mask


def _masked_count(num: V, den: V) -> bool:
    """`where(mask, x, 0).sum() / mask.sum()`: when the count is 0 the quotient is NaN, but no
    gradient passes the `where` (its backward puts 0 where the mask does not hold, not inf * 0),
    so no gradient becomes inf or NaN."""
    gates = [getattr(t, "gate", EMPTY) for t in storages(num)]
    counts = [getattr(t, "counts", EMPTY) for t in storages(den)]
    return bool(gates) and bool(counts) and all(c and all(g & c for g in gates) for c in counts)


def scatter_rows(into: V, index: V, out: V) -> None:
    """`zeros(g, d).scatter_add_(0, index, src)` with `index = arange(g).repeat_interleave(c)`:
    gradient goes back to `src` only from the rows of groups with a nonzero count (backward
    gathers the rows `index` names), as `into` carries none of its own."""
    if requires_grad(into):
        return
    groups = frozenset().union(*(getattr(t, "groups", EMPTY) for t in storages(index)))
    if not groups:
        return
    for t in storages(out):
        if isinstance(t, TensorObj):
            t.row_gate = groups


def _rows_of_division(num: V, den: V, risks: set, out: V) -> None:
    """`per_group_sum / counts` where the sum was scattered by the groups of `counts`: where a
    count is 0 the quotient is NaN, but only in that empty group's row, whose gradient goes nowhere
    (it is no source row): what is left is a value hazard in rows `repeat_interleave(counts)`
    drops."""
    if not risks:
        return
    den_parts = set(storages(den))
    for t in storages(den):
        den_parts |= getattr(t, "counts", EMPTY)
    gates = [getattr(t, "row_gate", EMPTY) for t in storages(num)]
    if not gates or not all(g & den_parts for g in gates):
        return
    for t in storages(out):
        if isinstance(t, TensorObj) and t not in den_parts:
            t.nan_rows = (frozenset(den_parts), frozenset(r for r in risks if r.code == "GA402"))


def _keep_rows(ins, out: V) -> None:
    """An elementwise op keeps rows where they are: NaN rows of one input stay the same rows of
    the result, unless another input brings division hazards of its own."""
    if not any(isinstance(v, V) and v.risks for v in ins):
        return  # rows that hold NaN carry their hazard: none here
    found = [nr for v in ins if isinstance(v, V) for t in storages(v) if (nr := getattr(t, "nan_rows", None))]
    if not found or any(nr[0] != found[0][0] for nr in found):
        return
    counts, risks = found[0][0], frozenset().union(*(nr[1] for nr in found))
    for v in ins:
        if isinstance(v, V) and any(r.code == "GA402" and r not in risks for r in v.risks):
            return
    parts = {t for v in ins if isinstance(v, V) for t in storages(v)}
    for t in storages(out):
        if isinstance(t, TensorObj) and t not in parts:
            t.nan_rows = (counts, risks)


def _repeat_rows(x: V, repeats, ins, kwargs, out: V) -> V:
    """`arange(g).repeat_interleave(c)`: the groups of c with a nonzero count. `q.repeat_interleave(c,
    dim=0)` of a quotient NaN only in the rows of c's empty groups: each row is repeated its
    group's count of times, so those rows are gone, with their hazards."""
    if not isinstance(repeats, V) or not repeats.k & Kind.TENSOR:
        return out
    counts = frozenset(storages(repeats))
    if x.marks & Mark.RANGE:
        for t in storages(out):
            if isinstance(t, TensorObj):
                t.groups = counts
        return out
    dim = ins[2] if len(ins) > 2 else kwargs.get("dim")
    if dim is not None and not (isinstance(dim, V) and dim.const == 0):
        return out
    gone: frozenset = EMPTY
    for t in storages(x):
        nr = getattr(t, "nan_rows", None)
        if nr is not None and nr[0] & counts:
            gone |= nr[1]
    return out.replace(risks=out.risks - gone) if gone else out


def _number(c) -> TypeGuard[int | float]:
    """A finite Python number (not a bool)."""
    return isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c)


def _finite_bound(v) -> bool:
    return isinstance(v, V) and _number(v.const)


def _reaches_unit_bound(ins: list, kwargs: dict) -> bool:
    """`clamp(x, lo, hi)` with constant bounds within [-1, 1], one of them -1 or 1."""
    lo = kwargs.get("min", ins[1] if len(ins) > 1 else None)
    hi = kwargs.get("max", ins[2] if len(ins) > 2 else None)
    low, high = (v.const if isinstance(v, V) else None for v in (lo, hi))
    if not (_number(low) and _number(high)):
        return False
    return -1 <= low <= high <= 1 and (low == -1 or high == 1)


def _clamped_infinities(x: V, ins: list, kwargs: dict, op: str, node, out: V) -> V:
    """`(1 - c / rho).clamp(min=0)` with `rho` carrying no gradient: where `rho` is 0 the quotient
    is +inf, `1 - inf` is -inf and the clamp makes it 0. A division hazard whose inf the clamp's
    bound on that side makes finite is gone from the result (its value and, as nothing carries
    gradient through the division, its gradient); NaN (0 / 0) and gradients through it are not."""
    if op == "clamp_min":
        lo, hi = ins[1] if len(ins) > 1 else kwargs.get("min"), None
    elif op == "clamp_max":
        lo, hi = None, ins[1] if len(ins) > 1 else kwargs.get("max")
    else:
        lo = ins[1] if len(ins) > 1 else kwargs.get("min")
        hi = ins[2] if len(ins) > 2 else kwargs.get("max")
    bounded = {-1: _finite_bound(lo), 1: _finite_bound(hi)}
    if not (bounded[-1] or bounded[1]) or not isinstance(node, ast.Call):
        return out
    recv = node.func.value if isinstance(node.func, ast.Attribute) else None
    if recv is None or (isinstance(recv, ast.Name) and recv.id == "torch"):
        recv = node.args[0] if node.args else None
    gone = set()
    for r in x.risks:
        if r.code == "GA402" and r.constant and r.inf_sign:
            sign = r.inf_sign * _inf_sign_in(recv, r.site.node)
            if sign and bounded[sign]:
                gone.add(r)
    return out.replace(risks=out.risks - gone) if gone else out


def _literal(e) -> float | None:
    """A number written in the expression (`1`, `-0.5`), else None."""
    neg = False
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        e, neg = e.operand, True
    if isinstance(e, ast.Constant) and _number(e.value):
        return -e.value if neg else e.value
    return None


def _inf_sign_in(e, target) -> int:
    """The sign an inf of the subexpression `target` has in `e` when only numbers written in the
    expression combine with it (`1 - q`, `-2 * q`, `q / 4`); 0 when unknown or not there."""
    if e is target:
        return 1
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        inner = _inf_sign_in(e.operand, target)
        return -inner if isinstance(e.op, ast.USub) else inner
    if not isinstance(e, ast.BinOp):
        return 0
    left, right = _literal(e.left), _literal(e.right)
    if isinstance(e.op, (ast.Add, ast.Sub)):
        if left is not None:
            inner = _inf_sign_in(e.right, target)
            return -inner if isinstance(e.op, ast.Sub) else inner
        return _inf_sign_in(e.left, target) if right is not None else 0
    if isinstance(e.op, ast.Mult):
        if left:
            return (1 if left > 0 else -1) * _inf_sign_in(e.right, target)
        return (1 if right > 0 else -1) * _inf_sign_in(e.left, target) if right else 0
    if isinstance(e.op, ast.Div) and right:
        return (1 if right > 0 else -1) * _inf_sign_in(e.left, target)
    return 0


def _numerator_sign(num: V) -> int:
    """+1 / -1 when `num` is certainly nonzero with that sign (a number, or a value known > 0)."""
    c = num.const
    if _number(c) and c != 0:
        return 1 if c > 0 else -1
    return 1 if num.facts & Fact.POSITIVE else 0


def _one_plus(e) -> bool:
    """`1 + exp(x)` written out: a sum with a constant of at least 1/2 (not an eps)."""
    if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add)):
        return False
    return any(isinstance(c, ast.Constant) and _number(c.value) and c.value >= 0.5 for c in (e.left, e.right))


def check_division(ip: Core, num: V, den: V, node) -> set:
    """`num / den`: a manual softmax (GA404), or a denominator that can be 0 (GA402)."""
    if den.marks & Mark.LOG1PEXP and _one_plus(getattr(node, "right", None)):
        # `1 / (1 + exp(x))`, `exp(x) / (1 + exp(x))`: a sigmoid written by hand; past ~88 the exp
        # is inf, and the gradient inf / inf is NaN (torch.sigmoid is stable). Not a precision
        # `1 / (exp(log_var) + 1e-7)`: an eps guards a value that is no sigmoid
        return promote(ip, den, "exp", "GA404", "1 / (1 + exp(x)), a hand-written sigmoid")
    if num.marks & Mark.EXP and den.marks & Mark.EXP:
        # `exp(s) / (exp(s).sum() + 1e-8)` too: an eps does not keep the sum finite
        return promote(ip, num, "exp", "GA404", "exp(x) / exp(x).sum()")
    # a tensor, or the number of rows some data picked (`len(torch.nonzero(x))`)
    if den.k & (Kind.TENSOR | Kind.NUMBER) and N.risky(den) and not _masked_count(num, den):
        return {
            hazard(
                ip,
                "GA402",
                node,
                "a denominator that can be 0",
                CONFIRMED if den.marks & Mark.SELF else SUSPICIOUS,
                constant=not (requires_grad(num) or requires_grad(den)),
                # the denominator is >= 0 (a norm, a count, a probability): c / 0 is inf of c's sign
                inf_sign=_numerator_sign(num),
            )
        }
    return set()


# where a torch.distributions family takes its scale: its log_prob divides by it (and takes its log)
_SCALE_AT = {"Normal": 1, "LogNormal": 1, "Laplace": 1, "Cauchy": 1, "Gumbel": 1, "HalfNormal": 0, "HalfCauchy": 0}
_SCALE_AT["StudentT"] = 2


def distribution_scale(ip: Core, family: str, args, kwargs, node) -> set:
    """`Normal(loc, scale)` with a scale that can be exactly 0 (a ReLU output, a std, a count): its
    `log_prob` is `-(x - loc)**2 / (2 * scale**2) - log(scale) - ...`, inf or NaN there (GA402)."""
    pos = _SCALE_AT.get(family)
    if pos is None:
        return set()
    scale = kwargs.get("scale", args[pos] if len(args) > pos else None)
    if not isinstance(scale, V) or not scale.k & Kind.TENSOR or not N.risky(scale):
        return set()
    if scale.marks & (Mark.PROB | Mark.SIGM) or scale.facts & (Fact.ALL_SIGM | Fact.ALL_PROB):
        # a sigmoid of a learned log-std reaches exactly 0 only past -100, which no policy's std
        # drifts to; a softmax probability as a scale is another branch's value joined in (a
        # categorical policy's output unpacked as `mean, std`)
        return set()
    detail = f"the scale of {family}(...)"
    sure = CONFIRMED if scale.marks & Mark.SELF else SUSPICIOUS
    return {hazard(ip, "GA402", node, detail, sure, constant=not requires_grad(scale))}


def arith_numeric(ip: Core, opname, left: V, right: V, node, out: V) -> V:
    """+ - * / ** on tensors: value facts and the division's hazards."""
    if opname == "mul":
        # x * x, elementwise: one value on both sides (a name read twice)
        same = left is right or (left.site is right.site and bool(left.objs) and left.objs == right.objs)
    else:
        same = bool(set(storages(left)) & set(storages(right))) and opname == "sub" and not _shifted(node)
    is_max = opname == "sub" and _is_max_of(node, _function_of(ip))
    twins = opname == "sub" and not same and bool(left.org) and left.org == right.org
    marks, facts = N.arith(opname, left, right, same, is_max, twins)
    risks = set()
    _keep_rows((left, right), out)
    if opname == "div":
        risks = check_division(ip, left, right, node)
        _rows_of_division(left, right, risks, out)
    elif opname == "mul" and (left.marks | right.marks) & Mark.INV_EXP and (left.marks | right.marks) & Mark.EXP:
        # `exp(k) @ v * (1.0 / exp(k).sum())`: a manual softmax written with the reciprocal
        weighted = left if left.marks & Mark.EXP and not left.marks & Mark.INV_EXP else right
        risks = promote(ip, weighted, "exp", "GA404", "exp(x) * (1 / exp(x).sum())")
    elif opname == "pow":
        c = right.const
        if isinstance(c, float) and 0 < c < 1 and N.risky_under_root(left) and requires_grad(left):
            risks.add(hazard(ip, "GA403", node, f"** {c}", CONFIRMED if left.marks & Mark.SELF else SUSPICIOUS))
    if (
        opname in T.NAN_READING_ARITH
        and (left.marks | right.marks) & Mark.DATA_MIX
        and not marks & Mark.DATA_MIX
        and out.carries
        and not (opname == "pow" and right.const == 1)
        and not (opname == "mul" and _reads_no_nan(left, right))
    ):
        # (pred - y) ** 2, (pred - y) * w: backward reads the difference, NaN where y is
        risks.add(_nan_read(ip, node, opname))
    if opname == "mul":
        # `-log_prob * (ret - value)`: a weight made by a critic trains it through the policy term
        risks |= recording.note_score(ip, left, right, _operand(node, 1)) | recording.note_score(
            ip, right, left, _operand(node, 0)
        )
    elif opname == "pow" and right.const == 2 and ip.st.nograd is None:
        ip.st.trace.regressed.update(left.org)  # `(ret - value) ** 2`, a squared error
    if not marks and not facts and not risks:
        return out.replace(marks=out.marks & Mark.SCALED)
    return out.replace(
        marks=(out.marks & Mark.SCALED) | marks,
        facts=out.facts | facts,
        risks=out.risks | frozenset(risks) if risks else out.risks,
    )


def _operand(node, i: int):
    """The node of operand `i` of a binary operation (`a * b`, `torch.mul(a, b)`), else the node."""
    if isinstance(node, ast.BinOp):
        return node.right if i else node.left
    if isinstance(node, ast.Call) and len(node.args) > i:
        return node.args[i]
    return node


def where_hazards(ip: Core, node, cond: V, env) -> frozenset:
    """`torch.where(x > 0, sqrt(x), 0)`: the branch is computed for every element, so an unsafe op
    on the very values the condition excludes has a NaN gradient (GA405)."""
    compared: set[Obj] = set()  # storages: tensors and leaves
    for o in cond.objs:
        if isinstance(o, TensorObj):
            compared |= o.compared
    if not compared or env is None or not isinstance(node, ast.Call) or len(node.args) < 3:
        return EMPTY
    out = set()
    for branch in node.args[1:3]:
        for unsafe, operand in _unsafe_ops(branch):
            names = set() if _guarded(operand) else _direct_names(operand)
            hit = any(set(storages(env[n])) & compared for n in names if n in env)
            if hit:
                out.add(hazard(ip, "GA405", unsafe, "an op the condition excludes", CONFIRMED))
    return frozenset(out)


def unreduced_loss(op, argv, out: V) -> V:
    """A loss with `reduction='none'`: `mse_loss` is `(input - target) ** 2` elementwise, with the
    marks that expression has, so a root of its partial mean (a per-sample or per-source RMSE) is
    judged as a norm written by hand: 0 where one sample's prediction equals its target (a silent
    or zero-padded one), with an infinite gradient there."""
    if op != "mse_loss" or len(argv) < 2 or not all(isinstance(a, V) for a in argv[:2]):
        return out
    left, right = argv[0], argv[1]
    same = bool(set(storages(left)) & set(storages(right)))
    twins = not same and bool(left.org) and left.org == right.org
    dm, df = N.arith("sub", left, right, same, False, twins)
    marks, facts = N.arith("pow", left.replace(marks=dm, facts=df, const=None), const(2), False, False)
    if not marks and not facts:
        return out
    return out.replace(marks=out.marks | marks, facts=out.facts | facts)


def _probabilities_for_sure(x: V) -> str | None:
    """How sure it is that `x`, marked as probabilities on some path, is probabilities: proven when
    every path gives them; on some paths only (a sigmoid under a branch the engine could not decide),
    the other paths may give logits. None when another path the engine saw gives logits (a layer
    chosen by a config entry, a head applied on one arm only): which one runs is not known, and
    logits are as likely."""
    if x.facts & (Fact.ALL_PROB | Fact.ALL_SIGM):
        return CONFIRMED
    return None if x.marks & Mark.LOGITS and not x.marks & Mark.NET_OUT else SUSPICIOUS


def loss_misuse(ip: Core, op, argv, node, arg_node):
    """Probabilities into a loss that expects logits (GA407: cross_entropy, nll_loss, and a sigmoid
    into binary_cross_entropy_with_logits), a sigmoid into BCELoss (GA408).
    `op`: the loss functional (a loss module passes the one its forward() runs)."""
    if not argv or not isinstance(argv[0], V) or ip.st.nograd is not None or not argv[0].carries:
        return EMPTY
    x = argv[0]
    sure = _probabilities_for_sure(x)
    if sure is None:
        return EMPTY
    if op == "cross_entropy" and x.marks & (Mark.PROB | Mark.SIGM):
        what = "softmax probabilities" if x.marks & Mark.PROB else "sigmoid outputs"
        return frozenset({hazard(ip, "GA407", arg_node or node, f"{what} into cross_entropy", sure)})
    if op == "nll_loss" and x.marks & Mark.PROB:
        sure = CONFIRMED if x.facts & Fact.ALL_PROB else SUSPICIOUS
        return frozenset({hazard(ip, "GA407", arg_node or node, "softmax probabilities into nll_loss", sure)})
    if op == "binary_cross_entropy_with_logits" and x.marks & Mark.SIGM:
        # the loss applies the sigmoid itself: a second one squashes every output into (0.5, 0.73)
        sure = CONFIRMED if x.facts & Fact.ALL_SIGM else SUSPICIOUS
        what = "sigmoid outputs into binary_cross_entropy_with_logits"
        return frozenset({hazard(ip, "GA407", arg_node or node, what, sure)})
    if op == "binary_cross_entropy" and x.marks & Mark.SIGM:
        sure = CONFIRMED if x.facts & Fact.ALL_SIGM else SUSPICIOUS
        return frozenset({hazard(ip, "GA408", node, "sigmoid outputs into binary_cross_entropy", sure)})
    return EMPTY


def logits_given_probabilities(ip: Core, family: str, kwargs, node) -> frozenset:
    """`Categorical(logits=F.softmax(x))`: a distribution given probabilities as its logits normalises
    them once more (log_softmax of values in [0, 1]: every category within a factor e of the
    others), so the policy can never become confident and its gradients shrink (GA407). The same
    for a sigmoid given as a Bernoulli's logits."""
    x = kwargs.get("logits")
    if not isinstance(x, V) or ip.st.nograd is not None or not x.carries or not x.marks & (Mark.PROB | Mark.SIGM):
        return EMPTY
    sure = _probabilities_for_sure(x)
    if sure is None:
        return EMPTY
    arg = next((k.value for k in getattr(node, "keywords", ()) if k.arg == "logits"), node)
    what = "softmax probabilities" if x.marks & Mark.PROB else "sigmoid outputs"
    return frozenset({hazard(ip, "GA407", arg, f"{what} as the `logits` of {family}", sure)})


def _function_of(ip: Core):
    """The function running, or at a script's top level its module (its names are assigned there)."""
    frame = ip.st.stack[-1] if ip.st.stack else None
    if frame is not None and frame.func is not None:
        return frame.func.node
    return getattr(ip.st.sf, "tree", None)


def _is_max_of(node, fn=None) -> bool:
    """`s - s.max(dim, keepdim=True).values` (or `[0]`, `torch.max(s, ...)`, `.amax`), also through a
    name the function assigned it to and through what keeps an upper bound one (`m =
    torch.clamp(s.max(dim)[0], min=0.)`, `.detach()`): exp of the difference is at most 1."""
    if not isinstance(node, ast.BinOp):
        return False
    return _upper_bound_of(node.right, ast.dump(node.left), fn, node.lineno, 0)


def _upper_bound_of(right, left: str, fn, line: int, depth: int) -> bool:
    if depth > 3:
        return False
    if isinstance(right, ast.Name) and fn is not None:
        value = _assigned_before(fn, right.id, line)
        return value is not None and _upper_bound_of(value, left, fn, line, depth + 1)
    if isinstance(right, ast.Attribute) and right.attr == "values":
        right = right.value
    if isinstance(right, ast.Subscript):
        right = right.value
    if not isinstance(right, ast.Call):
        return False
    func = right.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in T.AT_LEAST_FIRST:
        module_call = isinstance(func, ast.Name) or (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("torch", "F")
        )
        given = right.args[1:] if module_call else right.args
        if name in T.UPPER_CLAMPS and (len(given) > 1 or any(k.arg == "max" for k in right.keywords)):
            return False  # an upper clamp can bring it below the maximum
        if module_call or not isinstance(func, ast.Attribute):
            inner = right.args[0] if right.args else None
        else:
            inner = func.value  # `m.clamp(min=0)`, `m.detach()`
        return inner is not None and _upper_bound_of(inner, left, fn, line, depth + 1)
    if not isinstance(func, ast.Attribute) or func.attr not in T.UPPER_BOUNDS:
        return False
    base = func.value
    if isinstance(base, ast.Name) and base.id == "torch" and right.args:
        base = right.args[0]
    return ast.dump(base) == left


def _assigned_before(fn, name: str, line: int):
    """The value last assigned to `name` in the function `fn` by a plain assignment before `line`."""
    table = getattr(fn, "_gradaudit_assigned", None)
    if table is None:
        table = {}
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                table.setdefault(n.targets[0].id, []).append((n.lineno, n.value))
            elif (
                isinstance(n, ast.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Tuple)
                and n.targets[0].elts
                and isinstance(n.targets[0].elts[0], ast.Name)
            ):
                # `logits_max, _ = torch.max(s, dim=1, keepdim=True)`: the first of the call's results
                first = ast.Subscript(value=n.value, slice=ast.Constant(0), ctx=ast.Load())
                table.setdefault(n.targets[0].elts[0].id, []).append((n.lineno, first))
        fn._gradaudit_assigned = table
    found = [(ln, v) for ln, v in table.get(name, ()) if ln < line]
    return max(found, key=lambda x: x[0])[1] if found else None


def _shifted(node) -> bool:
    """`x[1:] - x[:-1]` (`x[..., 2:] - x[..., :-2]`, `x[1::2] - x[::2]`, `box[:, 2] - box[:, 0]`):
    slices of one tensor that start at different constant offsets with the same step, or different
    constant indices, pair distinct elements, a finite
    difference, not an element with itself (zero only where neighbours are equal, like any a - b)."""
    if not (
        isinstance(node, ast.BinOp) and isinstance(node.left, ast.Subscript) and isinstance(node.right, ast.Subscript)
    ):
        return False
    if ast.dump(node.left.value) != ast.dump(node.right.value):
        return False
    a, b = _index_items(node.left.slice), _index_items(node.right.slice)
    if len(a) != len(b):
        return False
    shifted = False
    for x, y in zip(a, b):
        if isinstance(x, ast.Slice) and isinstance(y, ast.Slice):
            sx, sy = _start(x), _start(y)
            if (
                sx is None
                or sy is None
                or ast.dump(x.step or ast.Constant(None)) != ast.dump(y.step or ast.Constant(None))
            ):
                return False
            shifted = shifted or sx != sy
        elif (cx := _int_index(x)) is not None and (cy := _int_index(y)) is not None and (cx < 0) == (cy < 0):
            shifted = shifted or cx != cy  # `box[:, 2] - box[:, 0]`: two columns, never one element
        elif ast.dump(x) != ast.dump(y):
            return False  # a different index or new axis: rows can meet themselves (x[:, None] - x[None])
    return shifted


def _int_index(node) -> int | None:
    """A constant integer index (`2`, `-1`), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_index(node.operand)
        return -inner if inner is not None and inner > 0 else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _index_items(sl) -> list:
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


def _start(sl: ast.Slice):
    """A slice's constant non-negative start (0 when omitted), else None."""
    if sl.lower is None:
        return 0
    if isinstance(sl.lower, ast.Constant) and isinstance(sl.lower.value, int) and sl.lower.value >= 0:
        return sl.lower.value
    return None


def _guarded(expr) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in T.WHERE_GUARDS


def _direct_names(expr) -> set:
    """Names the operand is built from through arithmetic and zero-preserving ops only: in
    `log(-expm1(x))` under `where(x < t, ...)` the operand is a new function of x whose own zeros the
    condition says nothing about (log1mexp's branch split), so x is not "the very value" there."""
    out, todo = set(), [expr]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.BinOp):
            todo += (n.left, n.right)
        elif isinstance(n, ast.UnaryOp):
            todo.append(n.operand)
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and not isinstance(n.ctx, ast.Store):
            todo.append(n.value)
        elif isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in T.SAME_ZEROS:
                if isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id == "torch"):
                    todo.append(f.value)
                elif n.args:
                    todo.append(n.args[0])
    return out


def _unsafe_ops(expr):
    """(op node, operand) for sqrt/log/... calls and divisions inside an expression."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Call):
            name = (
                n.func.attr
                if isinstance(n.func, ast.Attribute)
                else n.func.id
                if isinstance(n.func, ast.Name)
                else None
            )
            if name in _UNSAFE_CALLS:
                operand = n.args[0] if n.args else (n.func.value if isinstance(n.func, ast.Attribute) else None)
                if isinstance(n.func, ast.Attribute) and not n.args:
                    operand = n.func.value
                if operand is not None:
                    yield n, operand
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div):
            yield n, n.right

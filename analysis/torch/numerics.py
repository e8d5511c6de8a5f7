"""Value facts for the numerical rules (GA401-GA408): which tensors can be exactly zero, are
probabilities, raw logits, or an `exp` result, which are guarded (`+ eps`, `clamp_min`), and the
hazards an op creates on such values.

A hazard is a `trace.RiskRec` at the op (a `log` of a softmax probability, a division by a mask
count). It travels with every value computed from the result (NaN and inf propagate through
everything, `.detach()` and `.item()` included); a rule reports the hazards that reach a
`backward()`. Some hazards are latent (an `exp` of logits, a `-inf` mask) and become one only
when the value is used in a way that overflows (normalised by its own sum, inside `log(1 + ...)`)
or is fully masked (a softmax over it).

What each op does to these facts is kept here by name; the names are torch's (`Tensor` methods,
`torch.*`, `torch.nn.functional.*`), each group saying why. These are value ranges (a softmax is
in [0, 1], ReLU >= 0), which torch's autograd tables do not hold; what they do hold (divisions,
fractional powers, the names of + - * / **) the engine reads from torch_api.py.
"""

from __future__ import annotations

from ..interp.values import Fact, Mark

# results that are probabilities: exactly 0 (or 1) once exp underflows in float32
PROBABILITIES = {"softmax", "_softmax", "softmin", "Softmax", "Softmin"}
SIGMOIDS = {"sigmoid", "expit", "Sigmoid", "hardsigmoid"}
# results >= 0 that are exactly 0 for some inputs (rectifiers, magnitudes, spreads, counts)
NONNEG_ZERO = {"relu", "relu6", "ReLU", "ReLU6", "count_nonzero", "poisson", "one_hot", "bincount"}
MAGNITUDES = {"abs", "square", "norm", "std", "var", "vector_norm", "matrix_norm", "cdist", "pdist"}
# results guaranteed > 0 (a log, a division or a sqrt of them is safe)
POSITIVE_OPS = {"exp", "exp2", "softplus", "Softplus", "cosh", "elu_plus_one"}
# results that are no longer raw activations (normalised, bounded, log-domain)
BOUNDED = {
    "tanh",
    "Tanh",
    "log_softmax",
    "LogSoftmax",
    "logsigmoid",
    "LogSigmoid",
    "logsumexp",
    "layer_norm",
    "LayerNorm",
    "normalize",
    "batch_norm",
    "group_norm",
    "rms_norm",
    "sin",
    "cos",
    "clamp",
    "clip",
}
# linear maps of their input: raw activations stay raw
LINEAR = {
    "linear",
    "matmul",
    "mm",
    "bmm",
    "einsum",
    "conv1d",
    "conv2d",
    "conv3d",
    "embedding",
    "Linear",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "Embedding",
    "Bilinear",
    "addmm",
}
# the value passes through unchanged (shape, dtype, selection)
KEEP = {
    "view",
    "reshape",
    "squeeze",
    "unsqueeze",
    "flatten",
    "unflatten",
    "transpose",
    "permute",
    "t",
    "T",
    "contiguous",
    "clone",
    "to",
    "float",
    "double",
    "half",
    "bfloat16",
    "cpu",
    "cuda",
    "type_as",
    "expand",
    "expand_as",
    "repeat",
    "narrow",
    "select",
    "index_select",
    "gather",
    "masked_select",
    "roll",
    "flip",
    "chunk",
    "split",
    "unbind",
    "dropout",
    "Dropout",
    "detach",
    "getitem",
    "cat",
    "stack",
    "movedim",
    "view_as",
    "reshape_as",
    "squeeze_",
    "unsqueeze_",
    "requires_grad_",
    "Identity",
    "Flatten",
}
# The catalog's families (GA401 logs, GA403 roots) by name: the op table's domain facts say
# where each stops being finite (-inf at 0; an infinite gradient at 0), but they do not tell a
# log from rsqrt or reciprocal, which share those facts (tests/test_ops_table.py checks them).
LOGS = {"log", "log2", "log10"}
ROOTS = {"sqrt", "rsqrt"}
MASK_BUILDERS = {"triu", "tril"}  # a causal mask keeps one unmasked key per row
REDUCTIONS = {"sum", "mean", "nansum", "nanmean", "cumsum"}

NUMERIC_MARKS = Mark.PROB | Mark.SIGM | Mark.ZERO | Mark.LOGITS | Mark.EXP | Mark.LOG1PEXP | Mark.CAUSAL | Mark.SELF
RISKY = Mark.ZERO | Mark.PROB | Mark.SIGM


def inherited(values) -> int:
    out = 0
    for v in values:
        out |= v.marks
    return out & NUMERIC_MARKS


def risky(v) -> bool:
    """May be exactly zero here, with no guard on the way."""
    return bool(v.marks & RISKY) and not v.facts & Fact.POSITIVE


def positive_const(c) -> bool:
    return isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0


def marks_of(op: str, inputs) -> tuple[int, int]:
    """(marks, facts) of an op's result from its name and its inputs' marks; (0, 0) for ops the
    numerical rules know nothing about."""
    ts = [v for v in inputs if v is not None]
    first = ts[0] if ts else None
    if op in KEEP:
        return inherited(ts[:1] if op not in ("cat", "stack") else ts), _facts_of(ts[:1])
    if op in PROBABILITIES:
        return Mark.PROB | Mark.ZERO, 0
    if op in SIGMOIDS:
        return Mark.SIGM | Mark.ZERO, 0
    if op in NONNEG_ZERO:
        return Mark.ZERO, 0
    if op in MAGNITUDES:
        if op in ("abs", "square") and first is not None and not first.marks & (Mark.ZERO | Mark.SELF):
            return 0, _facts_of(ts[:1]) & Fact.POSITIVE
        return Mark.ZERO, 0
    if op in POSITIVE_OPS:
        return 0, Fact.POSITIVE
    if op in MASK_BUILDERS:
        return Mark.CAUSAL, 0
    if op in LINEAR:
        return Mark.LOGITS, 0
    if op in REDUCTIONS and first is not None:
        m = first.marks & (Mark.ZERO | Mark.LOGITS | Mark.EXP)
        return m, first.facts & Fact.POSITIVE
    if op in ("amax", "amin", "max", "min", "median", "mode", "kthvalue"):
        return (first.marks & (Mark.ZERO | Mark.LOGITS)) if first is not None else 0, 0
    if op in BOUNDED:
        return 0, 0
    if op == "neg" and first is not None:
        return first.marks & Mark.LOGITS, 0
    return 0, 0


def _facts_of(values) -> int:
    out = Fact.POSITIVE
    for v in values:
        out &= v.facts
    return out & Fact.POSITIVE if values else 0


def arith(op: str, left, right, same_storage: bool, right_is_max_of_left: bool, twins: bool = False) -> tuple[int, int]:
    """(marks, facts) of `left op right` for + - * / (a Python number is a V with a const).
    `twins`: both sides carry gradient from exactly the same parameters (two outputs of one network)."""
    lm, rm = left.marks & NUMERIC_MARKS, right.marks & NUMERIC_MARKS
    lpos = bool(left.facts & Fact.POSITIVE) or positive_const(left.const)
    rpos = bool(right.facts & Fact.POSITIVE) or positive_const(right.const)
    lnonneg = bool(lm & RISKY) or lpos
    rnonneg = bool(rm & RISKY) or rpos
    if op == "add":
        if (lpos and rnonneg) or (rpos and lnonneg):
            marks = 0
            if (positive_const(left.const) and rm & Mark.EXP) or (positive_const(right.const) and lm & Mark.EXP):
                marks = Mark.LOG1PEXP  # 1 + exp(x): log of it overflows with x
            return marks, Fact.POSITIVE
        return (lm | rm) & (Mark.LOGITS | Mark.ZERO if lnonneg and rnonneg else Mark.LOGITS), 0
    if op == "sub":
        if same_storage:
            return Mark.SELF | Mark.ZERO, 0  # x - x[j], x[:, None] - x[None]: zero on matching rows
        if right_is_max_of_left:
            return 0, 0  # s - s.max(): <= 0, exp of it cannot overflow
        if twins:
            # net(x1) - net(x2), a siamese pair: one function of two inputs is exactly 0 wherever the
            # inputs coincide (a duplicated sample, an augmentation that left a view unchanged). Not
            # SELF: whether they coincide is data, so what follows is suspicious, not confirmed. It
            # stays as unbounded as its operands (exp(neg - pos) of two scores overflows).
            return Mark.ZERO | ((lm | rm) & Mark.LOGITS), 0
        if positive_const(left.const) and rm & (Mark.PROB | Mark.SIGM):
            return Mark.ZERO, 0  # 1 - p: zero when p is 1
        return (lm | rm) & Mark.LOGITS, 0
    if op == "mul":
        marks = 0
        if lm & Mark.ZERO or rm & Mark.ZERO:
            marks |= Mark.ZERO
        if (lm | rm) & Mark.LOGITS:
            marks |= Mark.LOGITS
        facts = Fact.POSITIVE if lpos and rpos else 0
        return marks, facts
    if op == "div":
        marks = lm & (Mark.LOGITS | Mark.ZERO)
        return marks, Fact.POSITIVE if lpos and rpos else 0
    if op == "pow":
        c = right.const
        if isinstance(c, (int, float)) and not isinstance(c, bool):
            if c == 2 or (isinstance(c, int) and c % 2 == 0):
                return (Mark.ZERO if lm & (Mark.ZERO | Mark.SELF) else 0), Fact.POSITIVE if lpos else 0
            if 0 < c < 1:
                return lm & Mark.ZERO, Fact.POSITIVE if lpos else 0
        return 0, 0
    return 0, 0


def guards(op: str, minimum) -> bool:
    """`clamp(min=eps)`, `clamp_min(eps)`, `maximum(x, eps)` with eps > 0."""
    return op in ("clamp", "clip", "clamp_min", "maximum", "fmax", "max") and positive_const(minimum)

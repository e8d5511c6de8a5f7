"""Value facts for the numerical rules (GA401-GA408): which tensors can be exactly zero, are
probabilities, raw logits, or an `exp` result, which are guarded (`+ eps`, `clamp_min`), and the
hazards an op creates on such values.

A hazard is a `trace.RiskRec` at the op (a `log` of a softmax probability, a division by a mask
count). It travels with every value computed from the result (NaN and inf propagate through
everything, `.detach()` and `.item()` included); a rule reports the hazards that reach a
`backward()`. Some hazards are latent (an `exp` of logits, a `-inf` mask) and become one only
when the value is used in a way that overflows (normalised by its own sum, inside `log(1 + ...)`)
or is fully masked (a softmax over it).

What each op does to these facts goes by its name: which names are probabilities, rectifiers,
linear maps and so on are torch facts (value ranges, which torch's autograd tables do not hold),
in ops/hand_facts.py with their reasons; what those tables do hold (divisions, fractional
powers, the names of + - * / **) is generated. Both are read through ops/torch_api.py.
"""

from __future__ import annotations

import re

from ..interp.values import Fact, Kind, Mark
from ..ops import torch_api as T

NUMERIC_MARKS = (
    Mark.PROB
    | Mark.SIGM
    | Mark.ZERO
    | Mark.LOGITS
    | Mark.EXP
    | Mark.LOG1PEXP
    | Mark.CAUSAL
    | Mark.SELF
    | Mark.RANGE
    | Mark.ZMASK
    | Mark.UNIT
    | Mark.SQUARES
    | Mark.DENSE
    | Mark.INV_EXP
    | Mark.RAW
    | Mark.UNIT_ROWS
    | Mark.DATA_MIX
    | Mark.NAN_TEST
    | Mark.LOGP
)
RISKY = Mark.ZERO | Mark.PROB | Mark.SIGM


def inherited(values) -> int:
    out = 0
    for v in values:
        out |= v.marks
    return out & NUMERIC_MARKS


def risky(v) -> bool:
    """May be exactly zero here, with no guard on the way."""
    return bool(v.marks & RISKY) and not v.facts & Fact.POSITIVE


def risky_under_root(v) -> bool:
    """May be exactly zero where a root's gradient is infinite: `risky`, or a sum of squares (a
    squared norm written by hand, 0 for a zero vector); not where only ReLU outputs at 0 make it 0
    (their backward stops the NaN: Fact.MASKED_ZERO)."""
    if v.facts & Fact.MASKED_ZERO:
        return False
    return risky(v) or bool(v.marks & Mark.SQUARES and not v.marks & Mark.DENSE)


def nonneg(v) -> bool:
    """Certainly >= 0: a probability, a rectified or counted value, or a value known so."""
    return bool(v.marks & RISKY or v.facts & (Fact.POSITIVE | Fact.NONNEG)) or (_number(v.const) and v.const >= 0)


def positive_const(c) -> bool:
    return _number(c) and c > 0


def marks_of(op: str, inputs, biased: bool = False, wide: bool = False) -> tuple[int, int]:
    """(marks, facts) of an op's result from its name and its inputs' marks; (0, 0) for ops the
    numerical rules know nothing about. `biased`: a layer that adds a learned bias (a functional
    linear map given one is seen from its operands); `wide`: its input is float64."""
    ts = [v for v in inputs if v is not None]
    first = ts[0] if ts else None
    if wide and (op in T.PROBABILITIES or op in T.SIGMOIDS):
        # float64: exp underflows past -745 and a sigmoid is 1.0 past ~37, beyond what a network
        # outputs, where float32 gets there at -104 and ~17: not exactly 0 or 1
        return 0, Fact.POSITIVE
    if op in T.KEEP:
        # a join (cat, stack) keeps the marks of every part, and what all its parts are
        parts = ts[:1] if op not in T.TENSOR_LIST_OPS else ts
        dense = Mark.DENSE if parts and all(v.marks & Mark.DENSE for v in parts) else 0
        return (inherited(parts) & ~Mark.DENSE) | dense, _facts_of(ts[:1]) | _kinds_of(parts)
    if op in T.PROBABILITIES:
        return Mark.PROB | Mark.ZERO, Fact.ALL_PROB
    if op in T.LOG_PROBABILITIES:
        return Mark.LOGP, 0
    if op in T.LOGS and first is not None and (first.marks & Mark.PROB or first.facts & Fact.ALL_PROB):
        # log(probs): a log-probability (its -inf at 0 is GA401's); also of the probabilities of
        # the actions drawn (`probs.gather(1, a).log()`), which are > 0 (tensors.picked)
        return Mark.LOGP, 0
    if op in T.SIGMOIDS:
        if first is not None and first.marks & Mark.UNIT:
            return 0, Fact.POSITIVE  # sigmoid of a cosine similarity: within [0.27, 0.73], never 0 or 1
        return Mark.SIGM | Mark.ZERO, Fact.ALL_SIGM
    if op in T.UNIT_RANGE:
        return Mark.UNIT, 0
    if op == "normalize":
        return Mark.UNIT_ROWS, 0
    if op in T.NONNEG_ZERO:
        return Mark.ZERO, (Fact.MASKED_ZERO if op in T.ZERO_MASKING else 0)
    if op in T.POOLS and first is not None:
        return (
            first.marks & (Mark.ZERO | Mark.DENSE | Mark.LOGITS | Mark.RAW),
            first.facts & (Fact.POSITIVE | Fact.MASKED_ZERO | Fact.NONNEG),
        )
    if op in T.ROOTS and first is not None and first.facts & Fact.POSITIVE:
        return 0, Fact.POSITIVE  # the root of a value > 0 (`sqrt(clamp(re**2 + im**2, min=eps))`)
    if op in T.ROOTS and first is not None and first.marks & Mark.SQUARES:
        # sqrt((x * x).sum(-1)): a norm written by hand, 0 where x is (torch's norms define a
        # gradient there; this one is NaN)
        return (0 if first.marks & Mark.DENSE else Mark.ZERO), 0
    if op in T.NORMS and first is not None and first.facts & (Fact.POSITIVE | Fact.NONZERO):
        return 0, Fact.POSITIVE  # the norm of a tensor that is not all zeros (an identity, ones)
    if op in T.SPREADS and first is not None and first.marks & Mark.DENSE:
        return 0, 0  # the norm or std of a biased layer's output: not 0 but on a null set
    if op in T.MAGNITUDES:
        squares = Mark.SQUARES if op == "square" else 0
        if first is not None and first.marks & Mark.DENSE:
            return squares | Mark.DENSE, Fact.NONNEG  # |x|, x.square() of a dense value: 0 where it is, a null set
        if op in T.POSITIVE_IF_NONZERO and first is not None and not first.marks & (Mark.ZERO | Mark.SELF):
            return squares, (_facts_of(ts[:1]) & Fact.POSITIVE) | Fact.NONNEG
        return Mark.ZERO | squares, Fact.NONNEG
    if op in T.EXPONENTIALS and first is not None and first.marks & Mark.LOGP:
        # exp of a log-probability: a probability again, exactly 0 where it underflowed (JORLDY's
        # policy returning `torch.exp(F.log_softmax(x))`, then `log(pi.gather(1, a))`)
        return Mark.PROB | Mark.ZERO, Fact.ALL_PROB
    if op in T.POSITIVE_OPS:
        return 0, Fact.POSITIVE
    if op in T.MASK_BUILDERS:
        return Mark.CAUSAL, 0
    if op in T.LINEAR:
        if op in T.BIAS_OPERAND and len(ts) > 2:
            biased = True  # F.linear(x, w, b): the bias is an operand
        # a product with an exp of raw activations (`einsum(exp(k), v)`) overflows with it
        marks = Mark.LOGITS | (Mark.DENSE if biased else 0) | (inherited(ts) & Mark.EXP)
        operands = [v for v in ts if v.k & Kind.TENSOR]
        if len(operands) == 2 and all(v.marks & Mark.UNIT_ROWS for v in operands) and not biased:
            # F.linear(F.normalize(x), F.normalize(w)): cosine similarities, within [-1, 1] and
            # exactly 1 where a feature lines up with its class weight (what training drives to)
            return Mark.UNIT, 0
        if len(operands) > 1 and all(nonneg(v) for v in operands):
            # mixture weights times densities (`einsum("ij,ij->i", softmax(w), exp(logp))`): >= 0,
            # unbounded still, but no layer's raw output
            return marks, Fact.NONNEG
        return marks | Mark.RAW, 0
    if op in T.SUMS and first is not None:
        if first.marks & Mark.CAUSAL:
            # a mask that keeps at least one entry per row (causal, or positions < lengths): its sum is >= 1
            return 0, Fact.POSITIVE
        if first.facts & (Fact.ALL_PROB | Fact.ALL_SIGM):
            # a sum (or mean) of probabilities or sigmoids, each > 0: it is 0 only if every one of them
            # underflowed at once (a single probability is the divisor that can be 0)
            return first.marks & (Mark.LOGITS | Mark.EXP | Mark.SQUARES), Fact.POSITIVE
        m = first.marks & (
            Mark.ZERO | Mark.LOGITS | Mark.EXP | Mark.SQUARES | Mark.DENSE | Mark.RAW | Mark.DATA_MIX | Mark.LOGP
        )
        facts = first.facts & (Fact.POSITIVE | Fact.MASKED_ZERO | Fact.NONNEG)
        if first.facts & Fact.NONZERO:
            # a tensor known not to be all zeros (`if mask.sum() == 0: return` above): a sum of
            # non-negative values (a mask) is then > 0; of other values, not all zeros was summed
            facts |= Fact.POSITIVE if first.marks & Mark.ZERO else Fact.NONZERO
        return m, facts
    if op in T.AXIS_PRODUCTS and first is not None:
        # zero where any factor is: a product of values that can be 0 (norms, counts) can be 0; of
        # positive ones it is positive, of non-negative ones non-negative
        return first.marks & (Mark.ZERO | Mark.DENSE), first.facts & (Fact.POSITIVE | Fact.NONNEG)
    if op in T.ORDER_STATISTICS:
        return (first.marks & (Mark.ZERO | Mark.LOGITS)) if first is not None else 0, 0
    if op in T.BOUNDED:
        return (Mark.DENSE if biased else 0), 0  # a norm layer's affine output is dense
    if op == "neg" and first is not None:
        return first.marks & (Mark.LOGITS | Mark.UNIT | Mark.DENSE | Mark.RAW | Mark.DATA_MIX | Mark.LOGP), 0
    return 0, 0


def _kinds_of(values) -> int:
    """Fact.ALL_PROB / ALL_SIGM when every value is one (a view, a slice, a cat of them)."""
    out = Fact.ALL_PROB | Fact.ALL_SIGM
    for v in values:
        out &= v.facts
    return out if values else 0


def _facts_of(values) -> int:
    kept = Fact.POSITIVE | Fact.NONZERO | Fact.F64 | Fact.F32 | Fact.MASKED_ZERO | Fact.NONNEG | Fact.NAN_FREE
    out = kept
    for v in values:
        out &= v.facts
    return out & kept if values else 0


def arith(op: str, left, right, same_storage: bool, right_is_max_of_left: bool, twins: bool = False) -> tuple[int, int]:
    """(marks, facts) of `left op right` for + - * / (a Python number is a V with a const).
    `same_storage`: both sides are one tensor (`x - x[j]`; `x * x`, elementwise).
    `twins`: both sides carry gradient from exactly the same parameters (two outputs of one network)."""
    marks, facts = _arith(op, left, right, same_storage, right_is_max_of_left, twins)
    marks |= data_mix(op, left, right)
    if _linear(op, left, right):
        marks |= (left.marks | right.marks) & Mark.LOGP  # log pi(a) + entropy, -log pi(a), 0.5 * log pi(a)
    # a layer's output shifted or scaled by a number is still that output (RAW); combined with a
    # tensor it is not
    if _number(right.const):
        marks |= left.marks & Mark.RAW
    elif _number(left.const):
        marks |= right.marks & Mark.RAW
    if op != "sub" and not facts & Fact.POSITIVE and nonneg(left) and nonneg(right):
        facts |= Fact.NONNEG
    return marks, facts


def data_mix(op: str, left, right) -> int:
    """Mark.DATA_MIX of `left op right`: a sum or difference of a tensor that carries gradient and
    one that carries none (a prediction and its target), or of such a value; scaled by a number it
    stays one. A product or quotient of tensors reads it in backward: that ends it (numeric_ops)."""
    if not _linear(op, left, right):
        return 0
    if (left.marks | right.marks) & Mark.DATA_MIX:
        return Mark.DATA_MIX
    if op in T.NAN_PASSING_ARITH and (_graph_and_data(left, right) or _graph_and_data(right, left)):
        return Mark.DATA_MIX
    return 0


def _linear(op: str, left, right) -> bool:
    """`a + b`, `a - b`, or a scaling by a number (`0.5 * x`, `x / n`): what each operand holds
    passes through with a constant derivative."""
    return op in T.NAN_PASSING_ARITH or (
        op in T.SCALING_ARITH and (_number(right.const) or (op != "div" and _number(left.const)))
    )


def _graph_and_data(a, b) -> bool:
    # `b`: a tensor, or a value of unseen making (a batch's target), that no parameter reaches; or,
    # in a unit run alone, another of the unit's made-up inputs whose name says it is the target
    if not (a.org or a.weak or a.top) or not b.k & (Kind.TENSOR | Kind.UNKNOWN) or _number(b.const):
        return False
    if b.facts & Fact.NAN_FREE:
        return False
    if not (b.org or b.weak or b.top):
        # data as loaded, not a computed value cut from its graph (a teacher's detached output, a
        # target made under no_grad): finite wherever the computation is
        return not b.cuts
    return (
        not b.org
        and not b.top
        and not (a.weak & b.weak)
        and all(getattr(u, "arg", False) and _TARGET_NAME.search(u.label) for u in b.weak)
    )


# a unit's input named as the data a prediction is compared with (`targets`, `labels`, `gt_boxes`, `y`)
_TARGET_NAME = re.compile(r"(?i)targ|label|truth|(?:^|_)gts?(?:$|_)|^y(?:$|_)|_y$")


def _number(c) -> bool:
    return isinstance(c, (int, float)) and not isinstance(c, bool)


def _arith(op: str, left, right, same_storage: bool, right_is_max_of_left: bool, twins: bool) -> tuple[int, int]:
    lm, rm = left.marks & NUMERIC_MARKS, right.marks & NUMERIC_MARKS
    # scaled by a number, or shifted: still dense (a difference of two such values is not: twins)
    dense = Mark.DENSE if _dense_side(left, right) or _dense_side(right, left) else 0
    lpos = bool(left.facts & Fact.POSITIVE) or positive_const(left.const)
    rpos = bool(right.facts & Fact.POSITIVE) or positive_const(right.const)
    lnonneg = bool(lm & RISKY or left.facts & Fact.NONNEG) or lpos
    rnonneg = bool(rm & RISKY or right.facts & Fact.NONNEG) or rpos
    if op == "add":
        if lm & rm & Mark.DENSE:
            # two dense values (the two directions of a bidirectional RNN): a + b is 0 only where
            # b = -a, a null set again (a - b is not: two outputs of one network meet where inputs do)
            dense = Mark.DENSE
        if (lm & Mark.ZMASK and rnonneg) or (rm & Mark.ZMASK and lnonneg):
            return 0, Fact.POSITIVE  # p + (p == 0) * eps: eps where p is 0, p elsewhere
        if (lpos and rnonneg) or (rpos and lnonneg):
            marks = 0
            if (positive_const(left.const) and rm & Mark.EXP) or (positive_const(right.const) and lm & Mark.EXP):
                marks = Mark.LOG1PEXP  # 1 + exp(x): log of it overflows with x
            # `exp(k).sum() + eps` is still inf where exp(k) is (a normaliser with an eps)
            return marks | ((lm | rm) & Mark.EXP), Fact.POSITIVE
        both = left.facts & right.facts & Fact.MASKED_ZERO
        keep = Mark.LOGITS | Mark.EXP  # `exp(k).sum() + eps`: inf where exp(k) is
        # a sum of two values >= 0 is 0 only where both are: both must be ones that can be 0 (a
        # square of a value not known to be 0 somewhere, f ** 2 + (1 - f) ** 2, is not)
        zero = Mark.ZERO if lm & RISKY and rm & RISKY else 0
        return (lm | rm) & (keep | zero) | dense, both
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
        if left.const == 1 and rm & Mark.UNIT:
            # 1 - cos, 1 - cos ** 2, 1 - tanh(u) ** 2: zero where the cosine (or tanh) is exactly 1,
            # which a converged embedding or a saturated tanh gives in float32
            return Mark.ZERO, 0
        if dense:
            return ((lm | rm) & Mark.LOGITS) | dense, 0
        if left.const == 1 and not rm and not right.facts and (right.org or right.weak or right.top):
            # `1 - x` of a value that requires grad and that nothing bounds: the code treats x as a
            # probability (a hand-written focal or binary cross-entropy loss on what a model gives),
            # which is exactly 1 where a sigmoid saturates; what follows from it is suspicious
            return Mark.ZERO, 0
        return (lm | rm) & Mark.LOGITS, 0
    if op == "mul":
        marks = 0
        if (lm & Mark.ZMASK and rpos) or (rm & Mark.ZMASK and lpos):
            marks |= Mark.ZMASK  # the guard scaled by a positive eps
        if lm & Mark.ZERO or rm & Mark.ZERO:
            marks |= Mark.ZERO
        if (lm | rm) & Mark.LOGITS:
            marks |= Mark.LOGITS
        if (lm | rm) & Mark.EXP:
            marks |= Mark.EXP  # `exp(k) * v`: inf where exp(k) is, a normalisation of it is NaN
        if same_storage:
            marks |= Mark.SQUARES | (lm & (Mark.DENSE | Mark.UNIT))
        elif dense and (_nonzero_number(left.const) or _nonzero_number(right.const)):
            marks |= Mark.DENSE
        facts = Fact.POSITIVE if lpos and rpos else 0
        # sigmoids scaled by a positive number (`0.5 * sigmoid(log_std)`): still saturating outputs,
        # 0 only past -100, and a sum of them still > 0
        if positive_const(right.const):
            facts |= left.facts & (Fact.ALL_SIGM | Fact.ALL_PROB)
        elif positive_const(left.const):
            facts |= right.facts & (Fact.ALL_SIGM | Fact.ALL_PROB)
        if same_storage or _nonzero_number(right.const):
            facts |= left.facts & Fact.MASKED_ZERO  # x * x, x * 2
        elif _nonzero_number(left.const):
            facts |= right.facts & Fact.MASKED_ZERO
        return marks, facts
    if op == "div":
        marks = lm & (Mark.LOGITS | Mark.ZERO) | (lm & Mark.DENSE if _nonzero_number(right.const) else 0)
        if positive_const(left.const) and rm & Mark.EXP:
            marks |= Mark.INV_EXP  # `1.0 / exp(k).sum()`: a normaliser
        masked = left.facts & Fact.MASKED_ZERO if _nonzero_number(right.const) else 0
        return marks, (Fact.POSITIVE if lpos and rpos else 0) | masked
    if op == "pow":
        c = right.const
        if isinstance(c, (int, float)) and not isinstance(c, bool):
            if c == 2 or (isinstance(c, int) and c % 2 == 0):
                zero = (Mark.ZERO if lm & (Mark.ZERO | Mark.SELF) else 0) | (lm & Mark.UNIT)
                facts = (Fact.POSITIVE if lpos else Fact.NONNEG) | (left.facts & Fact.MASKED_ZERO)
                return zero | (Mark.SQUARES | (lm & Mark.DENSE) if c == 2 else 0), facts
            if 0 < c < 1:
                # a root of a sum of squares is a norm: 0 where the tensor is
                norm = lm & Mark.SQUARES and not lm & Mark.DENSE and c == 0.5
                return (Mark.ZERO if norm else lm & Mark.ZERO), Fact.POSITIVE if lpos else 0
        return 0, 0
    return 0, 0


def _nonzero_number(c) -> bool:
    return isinstance(c, (int, float)) and not isinstance(c, bool) and c != 0


def _dense_side(a, b) -> bool:
    """`a + b` / `a - b` stays dense: `a` is, and `b` is a number or a value of the engine's own
    making that is not `a`'s twin (a shift, a residual)."""
    return bool(a.marks & Mark.DENSE) and (_nonzero_number(b.const) or b.const == 0 or not b.marks & Mark.DENSE)

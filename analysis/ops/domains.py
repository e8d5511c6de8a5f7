"""Where ops stop being finite, where derivatives.yaml does not say it.

`generate.py` reads each formula for divisions by an input or the result (`grad / (2 *
result)`: sqrt's gradient is infinite where its result is 0) and for `rsqrt`/`digamma` of an
input; those facts cite the formula. The YAML says nothing about forward values (log(0) = -inf)
or about formulas that call helpers of FunctionsManual.cpp (`log1p_backward`, `pow_backward`).
Those are here, keyed by ATen op (every overload) or `op.overload`, each with its reason.
Every entry is checked on concrete values with torch by tests/runtime/test_op_domains.py.

Entries: (input, condition, effect, why[, the other input the condition also depends on]),
conditions and effects as in records.AT / EFFECTS.
"""

from __future__ import annotations

_LOG = (
    ("self", "zero", "value_inf", "log(0) = -inf"),
    ("self", "negative", "value_nan", "the log of a negative number is NaN"),
)

HAND_DOMAINS = {
    "log": _LOG,
    "log2": _LOG,
    "log10": _LOG,
    "log1p": (
        ("self", "minus_one", "value_inf", "log1p(-1) = -inf"),
        ("self", "below_minus_one", "value_nan", "log1p(x) is NaN below -1"),
        ("self", "minus_one", "grad_inf", "log1p_backward divides grad by (self + 1)"),
    ),
    "sqrt": (
        ("self", "negative", "value_nan", "the square root of a negative number is NaN"),
        ("self", "zero", "grad_inf", "sqrt(0) = 0 and the formula divides by the result"),
    ),
    "rsqrt": (
        ("self", "zero", "value_inf", "rsqrt(0) = inf"),
        ("self", "negative", "value_nan", "rsqrt of a negative number is NaN"),
        ("self", "zero", "grad_inf", "the formula multiplies by result ** 3, infinite at 0"),
    ),
    "reciprocal": (
        ("self", "zero", "value_inf", "1 / 0 = inf"),
        ("self", "zero", "grad_inf", "the formula multiplies by result ** 2, infinite at 0"),
    ),
    "div.Tensor": (
        ("other", "zero", "value_inf", "x / 0 is inf (0 / 0 is NaN)"),
        ("other", "zero", "grad_inf", "div_tensor_self_backward divides grad by other"),
    ),
    "div.Tensor_mode": (("other", "zero", "value_inf", "x / 0 is inf (0 / 0 is NaN)"),),
    "div.Scalar": (("other", "zero", "value_inf", "x / 0 is inf (0 / 0 is NaN)"),),
    "pow.Tensor_Scalar": (
        (
            "self",
            "fractional_exponent",
            "grad_inf",
            "pow_backward: exponent * self ** (exponent - 1), infinite at 0 when 0 < exponent < 1",
            "exponent",
        ),
        ("self", "negative_exponent", "value_inf", "0 ** exponent is inf for exponent < 0", "exponent"),
        ("self", "negative", "value_nan", "a negative base to a non-integer exponent is NaN", "exponent"),
    ),
    "pow.Tensor_Tensor": (
        (
            "self",
            "fractional_exponent",
            "grad_inf",
            "pow_backward_self: exponent * self ** (exponent - 1), infinite at 0 when 0 < exponent < 1",
            "exponent",
        ),
        ("self", "negative_exponent", "value_inf", "0 ** exponent is inf for exponent < 0", "exponent"),
        ("self", "negative", "value_nan", "a negative base to a non-integer exponent is NaN", "exponent"),
    ),
    "acos": (("self", "outside_unit", "value_nan", "acos is defined on [-1, 1]"),),
    "asin": (("self", "outside_unit", "value_nan", "asin is defined on [-1, 1]"),),
    "atanh": (
        ("self", "unit", "value_inf", "atanh(+-1) = +-inf"),
        ("self", "outside_unit", "value_nan", "atanh is defined on [-1, 1]"),
    ),
    "acosh": (("self", "below_one", "value_nan", "acosh is defined on [1, inf)"),),
    "lgamma": (("self", "nonpositive_int", "value_inf", "lgamma has poles at 0, -1, -2, ..."),),
    "digamma": (
        ("self", "zero", "value_inf", "digamma(0) = -inf"),
        ("self", "negative_int", "value_nan", "digamma is NaN at -1, -2, ..."),
    ),
    "polygamma": (("self", "zero", "value_inf", "polygamma(n, 0) = inf (a pole)"),),
    "erfinv": (
        ("self", "unit", "value_inf", "erfinv(+-1) = +-inf"),
        ("self", "outside_unit", "value_nan", "erfinv is defined on [-1, 1]"),
        ("self", "unit", "grad_inf", "the formula multiplies by exp(erfinv(self) ** 2)"),
    ),
    "logit": (
        ("self", "zero_or_one", "value_inf", "logit(0) = -inf, logit(1) = inf (without eps)"),
        ("self", "outside_zero_one", "value_nan", "logit is defined on [0, 1] (without eps)"),
        ("self", "zero_or_one", "grad_inf", "logit_backward divides grad by self * (1 - self) (without eps)"),
    ),
    "xlogy.Tensor": (
        ("other", "zero", "value_inf", "self * log(0) = -inf for self != 0 (0 for self == 0)", "self"),
        ("other", "negative", "value_nan", "log of a negative number is NaN (0 for self == 0)", "self"),
    ),
    "exp": (("self", "large", "value_inf", "exp(x) overflows float32 above x = 88.7"),),
    "exp2": (("self", "large", "value_inf", "2 ** x overflows float32 above x = 128"),),
    "expm1": (("self", "large", "value_inf", "exp(x) - 1 overflows float32 above x = 88.7"),),
    "sinh": (("self", "large", "value_inf", "sinh(x) overflows float32 above |x| = 89.4"),),
    "cosh": (("self", "large", "value_inf", "cosh(x) overflows float32 above |x| = 89.4"),),
    # Safe at 0 although they divide: norm_backward and linalg_vector_norm_backward mask the
    # zero norm (the subgradient 0 is used); atan2_backward masks (0, 0).
}

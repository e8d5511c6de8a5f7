"""The op table (analysis/ops): lookups on the ops the rules rely on, the codec, the engine's
name sets derived from it, and that importing the engine does not load it. The table against
torch itself (regeneration, real saves, domains): test_ops_runtime.py."""

import subprocess
import sys

import pytest

from gradaudit.analysis.ops import (
    AT,
    EFFECTS,
    GRAD,
    NONE,
    RAISES,
    ZERO,
    Domain,
    _table,
    may_return_self,
    names,
    op_for,
    operator_for,
)
from gradaudit.analysis.ops import torch_api as T
from gradaudit.analysis.ops.records import decode, encode


def saves(ns, name):
    return {(s.value, s.output): set(s.when) for s in op_for(ns, name).saves()}


def facts(info, arg=None):
    return {(d.arg, d.at, d.effect) for d in info.domain if arg is None or d.arg == arg}


# --- what backward saves --------------------------------------------------------------------


def test_exp_saves_its_result_only():
    assert saves("Tensor", "exp") == {("result", True): {"self"}}
    assert op_for("torch", "exp").saves_result


def test_mul_saves_each_operand_for_the_other():
    assert saves("torch", "mul") == {("self", False): {"other"}, ("other", False): {"self"}}
    (ov,) = op_for("operator", "__mul__").match(["tensor", "tensor"])
    assert ov.saved_inputs({"self"}) == ("other",)
    assert ov.saved_inputs({"other"}) == ("self",)


def test_div_saves_the_divisor_always_and_the_dividend_for_the_divisor():
    assert saves("torch", "div") == {("self", False): {"other"}, ("other", False): {"self", "other"}}


def test_log_saves_its_input_and_sqrt_its_result():
    assert saves("Tensor", "log") == {("self", False): {"self"}}
    assert saves("torch", "sqrt") == {("result", True): {"self"}}


def test_sum_saves_no_tensor_only_its_shape():
    assert saves("Tensor", "sum") == {}
    assert op_for("Tensor", "sum").saves_known


def test_elu_saves_its_input_not_its_result():
    # derivatives.yaml: elu's formula reads `self` (is_result false); elu_ reads `result`
    assert saves("torch.nn.functional", "elu") == {("input", False): {"input"}}
    assert ("result", True) in saves("aten", "elu_")


def test_cross_entropy_saves_the_target_not_the_logits():
    # log_softmax saves its own result, nll_loss its (internal) input and the target
    info = op_for("F", "cross_entropy")
    assert info.steps == ("cross_entropy_loss",)
    assert op_for("aten", "cross_entropy_loss").steps == ("_log_softmax", "nll_loss_forward")
    assert ("input", False) not in saves("F", "cross_entropy")
    assert ("target", False) in saves("F", "cross_entropy")


def test_linear_saves_input_for_weight_and_weight_for_input():
    assert saves("F", "linear") == {("input", False): {"weight"}, ("weight", False): {"input"}}
    assert saves("nn", "Linear") == {("input", False): {"weight"}, ("weight", False): {"input"}}
    assert [(a.name, a.type) for a in op_for("nn", "Linear").overloads[0].args] == [
        ("input", "Tensor"),
        ("weight", "Parameter"),
        ("bias", "Parameter"),
    ]


def test_addmm_saves_the_matrices_not_the_bias():
    assert saves("torch", "addmm") == {("mat1", False): {"mat2"}, ("mat2", False): {"mat1"}}


def test_convolution_saves_input_and_weight_whatever_requires_grad():
    s = saves("F", "conv2d")
    assert s[("input", False)] == {"input", "weight", "bias"} and ("weight", False) in s


def test_unknown_composite_says_its_saves_are_unknown():
    info = op_for("torch", "einsum")
    assert info is not None and not info.saves_known


# --- gradients that do not flow ------------------------------------------------------------


@pytest.mark.parametrize(
    "ns, name",
    [
        ("torch", "argmax"),
        ("Tensor", "argmin"),
        ("torch", "argsort"),
        ("torch", "nonzero"),
        ("Tensor", "long"),
        ("Tensor", "bool"),
    ],
)
def test_integer_results_carry_no_gradient(ns, name):
    info = op_for(ns, name)
    assert info.no_grad and info.no_gradient and info.integral


@pytest.mark.parametrize(
    "name", ["eq", "ne", "gt", "ge", "lt", "le", "isnan", "isinf", "isfinite", "logical_and", "greater"]
)
def test_comparisons_are_bool_without_gradient(name):
    info = op_for("torch", name)
    assert info.no_grad and info.integral


@pytest.mark.parametrize("dunder", ["__gt__", "__eq__", "__lt__"])
def test_comparison_operators(dunder):
    assert op_for("operator", dunder).no_grad


@pytest.mark.parametrize("name", ["round", "floor", "ceil", "trunc", "sign", "sgn", "fix"])
def test_zero_almost_everywhere(name):
    info = op_for("torch", name)
    assert info.zero_grad and not info.no_grad and info.no_gradient
    assert all(s == ZERO for ov in info.overloads for _, s in ov.grads)


def test_frac_has_gradient_one():
    info = op_for("torch", "frac")
    assert info.differentiable == ("self",) and not info.zero_grad


def test_sort_topk_max_indices_carry_no_gradient():
    for ns, name in (("torch", "sort"), ("torch", "topk"), ("Tensor", "kthvalue")):
        info = op_for(ns, name)
        assert info.nondiff_outputs() == ("indices",)
        ov = info.overloads[0]
        assert ov.outputs[0].grad and not ov.outputs[1].grad and ov.outputs[1].integral
    (dim,) = op_for("Tensor", "max").match(["tensor", "number"])
    assert dim.name == "max.dim" and [o.grad for o in dim.outputs] == [True, False]


def test_floor_divide_backward_raises():
    info = op_for("torch", "floor_divide")
    assert info.grad_raises and info.no_gradient
    assert all(s == RAISES for ov in info.overloads for _, s in ov.grads)


def test_index_inputs_are_not_differentiable():
    ov = op_for("torch", "gather").overloads[0]
    assert ov.grad("index") == NONE and ov.grad("self") == GRAD


# --- in-place, out=, views --------------------------------------------------------------------


def test_add_inplace_and_out_variants():
    add_ = op_for("Tensor", "add_")
    assert add_.inplace and add_.inplace_of == "add"
    assert add_.overloads[0].args[0].mutated and add_.overloads[0].outputs[0].mutated
    assert op_for("torch", "add").inplace_variant == "add_"
    assert op_for("torch", "add").out_variant and not op_for("Tensor", "view").out_variant
    assert op_for("operator", "__iadd__").inplace


def test_view_aliases_its_input():
    info = op_for("Tensor", "view")
    assert info.view and info.may_alias
    assert info.overloads[0].outputs[0].alias == "self"
    for name in ("transpose", "permute", "unsqueeze", "expand", "reshape", "flatten", "t", "narrow"):
        assert op_for("Tensor", name).may_alias, name
    assert op_for("Tensor", "split").overloads[0].outputs[0].type == "Tensor[]"
    assert not op_for("Tensor", "clone").may_alias and not op_for("torch", "exp").may_alias


def test_unsqueeze_inplace_is_an_inplace_op():
    # torch bumps the version counter: a saved tensor reshaped in place breaks backward
    info = op_for("Tensor", "unsqueeze_")
    assert info.inplace and info.shape_inplace and not info.view


def test_what_may_return_its_input_itself():
    for name in ("to", "cuda", "float", "contiguous", "requires_grad_"):
        assert may_return_self(name), name
    for name in ("view", "t", "clone", "exp", "mul"):
        assert may_return_self(name) is None, name
    assert op_for("Tensor", "to").may_alias


# --- values: where ops stop being finite ----------------------------------------------------


def test_log_domain():
    info = op_for("Tensor", "log")
    assert {("self", "zero", "value_inf"), ("self", "negative", "value_nan"), ("self", "zero", "grad_inf")} <= facts(
        info
    )
    derived = [d for d in info.domain if d.effect == "grad_inf"]
    assert derived[0].why.startswith("derivatives.yaml:")


def test_sqrt_domain_from_the_formula_and_by_hand():
    info = op_for("torch", "sqrt")
    assert ("result", "zero", "grad_inf") in facts(info)  # grad / (2 * result)
    assert {("self", "zero", "grad_inf"), ("self", "negative", "value_nan")} <= facts(info)


@pytest.mark.parametrize(
    "name, fact",
    [
        ("rsqrt", ("self", "zero", "value_inf")),
        ("reciprocal", ("self", "zero", "grad_inf")),
        ("acos", ("self", "unit", "grad_inf")),
        ("asin", ("self", "unit", "grad_inf")),
        ("atanh", ("self", "unit", "grad_inf")),
        ("log1p", ("self", "minus_one", "value_inf")),
        ("lgamma", ("self", "nonpositive_int", "value_inf")),
        ("digamma", ("self", "zero", "grad_inf")),
        ("log2", ("self", "zero", "grad_inf")),
        ("log10", ("self", "zero", "grad_inf")),
        ("xlogy", ("other", "zero", "grad_inf")),
        ("exp", ("self", "large", "value_inf")),
    ],
)
def test_domains(name, fact):
    assert fact in facts(op_for("torch", name))


def test_pow_domain_depends_on_the_exponent():
    info = op_for("operator", "__pow__")
    frac = [d for d in info.domain if d.at == "fractional_exponent"]
    assert frac and all(d.arg == "self" and d.given == "exponent" and d.effect == "grad_inf" for d in frac)


def test_division_domain_is_on_the_divisor():
    assert {("other", "zero", "value_inf"), ("other", "zero", "grad_inf")} <= facts(op_for("operator", "__truediv__"))
    # number / tensor is reciprocal then mul: the tensor is the divisor
    assert ("self", "zero", "grad_inf") in facts(op_for("operator", "__rtruediv__"))


def test_guarded_compositions_have_no_domain():
    # F.normalize clamps the norm before dividing; log_softmax is stable; norm masks zero
    assert op_for("F", "normalize").domain == ()
    assert op_for("F", "log_softmax").domain == ()
    assert op_for("torch", "norm").domain == ()
    # a decomposition keeps only facts on its own arguments: rms_norm's pow(x, 2) is safe
    assert op_for("F", "rms_norm").domain == ()


def test_every_domain_fact_uses_known_conditions():
    d = op_for("torch", "log").domain[0]
    assert isinstance(d, Domain) and d.at in AT and d.effect in EFFECTS
    for line in _table.DOMAINS.strip("\n").split("\n"):
        op, ovl, arg, at, effect, why, given = line.split("\t")
        assert at in AT and effect in EFFECTS and why, line


# --- what users write -------------------------------------------------------------------------


def test_softmax_everywhere_reaches__softmax():
    for ns, name in (
        ("Tensor", "softmax"),
        ("torch", "softmax"),
        ("F", "softmax"),
        ("nn", "Softmax"),
        ("torch.special", "softmax"),
    ):
        info = op_for(ns, name)
        assert info is not None, (ns, name)
        assert info.saves_result, (ns, name)
    assert op_for("aten", "softmax").overloads[0].steps == ("_softmax",)
    assert op_for("F", "softmin").steps == ("neg", "softmax.int")


@pytest.mark.parametrize(
    "ns, name, step",
    [
        ("F", "relu", "relu"),
        ("nn", "ReLU", "relu"),
        ("F", "gelu", None),
        ("nn", "GELU", "gelu"),
        ("F", "mse_loss", "mse_loss"),
        ("nn", "MSELoss", "mse_loss"),
        ("F", "binary_cross_entropy", "binary_cross_entropy"),
        ("nn", "BCELoss", "binary_cross_entropy"),
        ("nn", "BCEWithLogitsLoss", "binary_cross_entropy_with_logits"),
        ("nn", "CrossEntropyLoss", "cross_entropy_loss"),
        ("F", "nll_loss", "nll_loss_nd"),
        ("nn", "Sigmoid", "sigmoid"),
        ("nn", "Conv2d", "conv2d"),
        ("nn", "LayerNorm", "layer_norm"),
        ("F", "embedding", "embedding"),
        ("nn", "Embedding", "embedding"),
        ("F", "logsigmoid", None),
    ],
)
def test_functionals_and_modules_are_mapped(ns, name, step):
    info = op_for(ns, name)
    assert info is not None
    if step is None:
        assert not info.decomposed  # a builtin of F: the ATen op itself
    else:
        assert step in info.steps


def test_embedding_swaps_its_arguments():
    info = op_for("F", "embedding")
    ov = info.overloads[0]
    assert [a.name for a in ov.args[:2]] == ["input", "weight"]
    assert ov.grad("weight") == GRAD and ov.grad("input") == NONE


def test_functional_with_a_guard_inside():
    info = op_for("F", "normalize")
    assert info.steps == ("linalg_vector_norm", "clamp_min", "expand_as", "div.Tensor")
    assert saves("F", "normalize") == {("input", False): {"input"}}


def test_operators():
    assert operator_for("Mult").target == "mul"
    assert operator_for("MatMult").target == "matmul"
    assert operator_for("Pow").target == "pow"
    assert operator_for("Div").target == "div"
    assert operator_for("USub").target == "neg"
    assert operator_for("Gt").no_grad
    assert operator_for("Div", reflected=True).steps == ("reciprocal", "mul.Tensor")
    assert operator_for("Pow", reflected=True).overloads[0].name == "operator.__rpow__"
    assert operator_for("Mult", inplace=True).target == "mul_"
    assert operator_for("Walrus") is None


def test_match_picks_the_overload_a_call_reaches():
    pow_ = op_for("operator", "__pow__")
    assert [o.name for o in pow_.match(["tensor", "number"])] == ["pow.Tensor_Scalar"]
    assert [o.name for o in pow_.match(["tensor", "tensor"])] == ["pow.Tensor_Tensor"]
    assert [o.name for o in op_for("torch", "pow").match(["number", "tensor"])] == ["pow.Scalar"]
    max_ = op_for("Tensor", "max")
    assert [o.name for o in max_.match(["tensor"])] == ["max"]
    assert [o.name for o in max_.match(["tensor"], {"dim": "number"})] == ["max.dim"]
    assert [o.name for o in max_.match(["tensor", "tensor"])] == ["max.other"]
    assert [o.name for o in op_for("torch", "div").match(["tensor", "number"])] == ["div.Tensor"]
    assert [o.name for o in op_for("torch", "div").match(["tensor", "tensor"], {"rounding_mode": "str"})] == [
        "div.Tensor_mode"
    ]
    assert op_for("torch", "exp").match(["tensor", "tensor", "tensor"]) == ()
    # only what x ** 2 reaches counts: it saves x, not its result
    (ov,) = pow_.match(["tensor", "number"])
    assert ov.saved_inputs({"self"}) == ("self",) and ov.saved_outputs() == ()


def test_loss_reductions_from_torch_signatures():
    assert op_for("nn", "CrossEntropyLoss").reduction == "mean"
    assert op_for("F", "mse_loss").reduction == "mean"
    assert op_for("nn", "BCEWithLogitsLoss").reduction == "mean"
    assert op_for("F", "relu").reduction is None and op_for("torch", "exp").reduction is None


def test_casts():
    assert op_for("Tensor", "float").differentiable == ("self",)
    assert op_for("Tensor", "long").no_grad


def test_namespaces_and_unknown_names():
    assert op_for("F", "relu") == op_for("torch.nn.functional", "relu")
    assert op_for("torch.linalg", "vector_norm").target == "linalg_vector_norm"
    assert op_for("torch.special", "expit").steps == ("sigmoid",)
    assert op_for("torch", "no_such_op") is None and op_for("nn", "NoSuchModule") is None
    assert op_for("aten", "_softmax") is not None
    assert {"exp", "softmax", "view"} <= names("Tensor")
    assert {"softmax", "cross_entropy", "normalize"} <= names("F")
    assert {"Linear", "ReLU", "CrossEntropyLoss"} <= names("nn")


# --- the table's encoding -------------------------------------------------------------------


def test_every_line_decodes_and_encodes_back():
    lines = _table.OPS.strip("\n").split("\n")
    assert len(lines) > 1000
    for line in lines:
        assert encode(decode(line)) == line


def test_surfaces_point_at_ops_in_the_table():
    ops = {line.split("|", 1)[0] for line in _table.OPS.strip("\n").split("\n")}
    for line in _table.SURFACES.strip("\n").split("\n"):
        ns, name, target = line.split("|")
        assert target.lstrip("=") in ops, line
    for line in _table.OPS.strip("\n").split("\n"):
        ov = decode(line)
        for step in ov.steps:
            assert step.split(".")[0] in ops, (ov.name, step)


# --- the engine's sets ----------------------------------------------------------------------


def test_engine_sets_come_from_the_table():
    assert {"exp", "sigmoid", "tanh", "softmax", "relu", "sqrt", "log_softmax"} <= T.SAVES_OUTPUT
    assert {"log", "pow", "abs", "clamp", "elu", "gelu", "mse_loss"} <= T.SAVES_INPUT
    assert {"mul", "matmul", "mm", "linear"} <= T.PRODUCTS
    assert "div" in T.DIVISIONS
    assert {"argmax", "eq", "round", "sign", "isnan", "long"} <= T.NONDIFF_OPS
    assert {"view", "reshape", "transpose", "T", "mT"} <= T.VIEW_OPS
    assert {"split", "chunk", "unbind"} <= T.SPLIT_OPS
    assert {"zeros", "randn", "arange", "zeros_like", "tensor", "from_numpy"} <= T.FACTORIES
    # what torch's tables say, where the hand lists said otherwise
    assert "cross_entropy" not in T.SAVES_INPUT
    assert "elu" not in T.SAVES_OUTPUT
    assert "addmm" not in T.SAVES_INPUT and "frac" not in T.SAVES_INPUT
    assert "unsqueeze_" not in T.VIEW_OPS
    assert not (T.SAVES_INPUT & T.PRODUCTS) and not (T.VIEW_OPS & T.SPLIT_OPS)
    assert T.MODULE_SAVES["ReLU"] == "output" and T.MODULE_SAVES["Linear"] == "input"
    assert T.MODULE_SAVES["ELU"] == "input" and T.MODULE_SAVES["LSTM"] == "input"


def test_value_sets_come_from_the_table():
    # zero derivative almost everywhere; poisson's is zero too, but a sample is data (NONDIFF_OPS)
    assert {"round", "floor", "ceil", "trunc", "fix", "sign", "sgn"} == T.ZERO_GRAD_OPS
    assert "poisson" in T.NONDIFF_OPS and "frac" not in T.ZERO_GRAD_OPS
    # (values, indices without gradient); aminmax's two results are both values with gradient
    assert {
        "max",
        "min",
        "sort",
        "topk",
        "kthvalue",
        "median",
        "mode",
        "cummax",
        "cummin",
        "nanmedian",
    } <= T.VALUES_INDICES
    assert "aminmax" not in T.VALUES_INDICES and "argmax" not in T.VALUES_INDICES
    # + - * / ** and their aliases, not ops that merely run one of them (dropout: mul, square: pow)
    assert T.ARITH_OPS == {
        "add": "add",
        "sub": "sub",
        "subtract": "sub",
        "mul": "mul",
        "multiply": "mul",
        "div": "div",
        "divide": "div",
        "true_divide": "div",
        "pow": "pow",
    }
    # infinite where the divisor is 0; xlogy's -inf at other == 0 needs self != 0: a log, no division
    assert {"div", "divide", "true_divide"} == T.ZERO_DIVISOR_INF
    assert op_for("torch", "xlogy").domain_of("other", "value_inf")
    assert {"pow"} == T.FRACTIONAL_POWERS
    assert {
        "cross_entropy",
        "nll_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "kl_div",
        "mse_loss",
        "ctc_loss",
    } <= T.LOSS_FUNCTIONS
    assert all(op_for("F", n).reduction == "mean" for n in T.LOSS_FUNCTIONS)


def test_the_numerical_families_have_the_domain_their_rules_report():
    from gradaudit.analysis.torch import numerics as N

    for name in N.LOGS:  # GA401: -inf at 0, NaN below
        for ns in ("Tensor", "torch"):
            assert {("self", "zero", "value_inf"), ("self", "negative", "value_nan")} <= facts(op_for(ns, name)), name
    for name in N.ROOTS:  # GA403: an infinite gradient at 0
        for ns in ("Tensor", "torch"):
            assert ("self", "zero", "grad_inf") in facts(op_for(ns, name)), name


def test_importing_the_engine_does_not_load_the_table():
    code = (
        "import sys, gradaudit.analysis.app.cli, gradaudit.analysis.check.engine; "
        "print('gradaudit.analysis.ops._table' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

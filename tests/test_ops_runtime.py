"""The op table against torch itself (needs the `test` extra): the committed table is what the
generator makes from the installed torch, and what it says about saves, gradients, views,
dtypes, domains and decompositions is what torch does on concrete tensors."""

import math
import warnings

import pytest

from gradaudit.analysis.ops import _table, op_for

pytestmark = [pytest.mark.runtime, pytest.mark.slow]
torch = pytest.importorskip("torch", reason="the op table is checked against torch (install the `test` extra)")
F = torch.nn.functional


def test_committed_table_is_what_the_installed_torch_generates():
    pytest.importorskip("torchgen", reason="torchgen ships with the torch wheel; without it nothing to regenerate from")
    pytest.importorskip("yaml", reason="torchgen's loaders read the YAML with PyYAML")
    from gradaudit.analysis.ops import generate

    if torch.__version__.split("+")[0] != _table.TORCH_VERSION:
        pytest.skip(f"the table is for torch {_table.TORCH_VERSION}, torch {torch.__version__} is installed")
    stale = [path for path, text in generate.outputs().items() if open(path, encoding="utf-8").read() != text]
    assert not stale, f"stale: {stale}; run `python -m gradaudit.analysis.ops.generate` and commit the result"


# --- saves: an in-place change of a saved tensor makes backward raise -----------------------


def _backward_raises(build, mutate):
    """build() -> (inputs dict, result); mutate(inputs, result) changes one in place."""
    inputs, result = build()
    mutate(inputs, result)
    try:
        result.sum().backward()
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e), e
        return True
    return False


def _leaf(*shape, low=0.2, high=0.8):
    return (torch.rand(*shape) * (high - low) + low).requires_grad_()


# (namespace, name, call, tensor arguments by table name, other arguments' kinds for match())
UNARY = [
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "tanh",
    "relu",
    "abs",
    "sin",
    "cos",
    "tan",
    "reciprocal",
    "expm1",
    "exp2",
    "logit",
    "sinc",
    "erf",
    "erfinv",
    "atan",
    "asin",
    "acos",
    "neg",
    "square",
    "frac",
    "log1p",
    "lgamma",
    "digamma",
    "sign",
    "round",
    "floor",
    "trunc",
    "sgn",
    "log2",
    "atanh",
]
FUNCTIONAL = [
    "elu",
    "selu",
    "celu",
    "gelu",
    "silu",
    "softplus",
    "mish",
    "hardtanh",
    "relu6",
    "leaky_relu",
    "logsigmoid",
    "softsign",
    "tanhshrink",
    "hardswish",
    "hardsigmoid",
]


def _unary_expectation(ns, name, arg):
    info = op_for(ns, name)
    (ov,) = info.match(["tensor"])
    return arg in ov.saved_inputs({arg}), bool(ov.saved_outputs())


@pytest.mark.parametrize("name", UNARY)
def test_unary_saves_match_torch(name):
    saves_input, saves_result = _unary_expectation("torch", name, "self")
    fn = getattr(torch, name)

    def build():
        x = _leaf(4)
        inp = x * 1.0  # a non-leaf: it may change in place
        return {"x": inp}, fn(inp)

    assert _backward_raises(build, lambda i, r: i["x"].add_(0.0)) == saves_input, "input"
    assert _backward_raises(build, lambda i, r: r.add_(0.0)) == saves_result, "result"


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_saves_match_torch(name):
    info = op_for("F", name)
    arg = info.overloads[0].args[0].name
    saves_input, saves_result = _unary_expectation("F", name, arg)
    fn = getattr(F, name)

    def build():
        inp = _leaf(4) * 1.0 - 0.5
        return {"x": inp}, fn(inp)

    assert _backward_raises(build, lambda i, r: i["x"].add_(0.0)) == saves_input, "input"
    assert _backward_raises(build, lambda i, r: r.add_(0.0)) == saves_result, "result"


BINARY = [
    # (namespace, name, call, table names of the two tensors)
    ("torch", "mul", torch.mul, ("self", "other")),
    ("torch", "div", torch.div, ("self", "other")),
    ("torch", "pow", torch.pow, ("self", "exponent")),
    ("torch", "matmul", lambda a, b: torch.matmul(a.view(2, 2), b.view(2, 2)), ("self", "other")),
    ("torch", "atan2", torch.atan2, ("self", "other")),
    ("torch", "maximum", torch.maximum, ("self", "other")),
    ("torch", "hypot", torch.hypot, ("self", "other")),
    ("torch", "xlogy", torch.xlogy, ("self", "other")),
    ("F", "mse_loss", F.mse_loss, ("input", "target")),
    ("F", "linear", lambda a, b: F.linear(a.view(2, 2), b.view(2, 2)), ("input", "weight")),
    ("F", "kl_div", lambda a, b: F.kl_div(a, b, reduction="sum"), ("input", "target")),
    ("F", "binary_cross_entropy", F.binary_cross_entropy, ("input", "target")),
    ("operator", "__rtruediv__", lambda a, b: a.__rtruediv__(b), ("self", "other")),
]


@pytest.mark.parametrize("ns, name, fn, roles", BINARY, ids=[f"{b[0]}.{b[1]}" for b in BINARY])
@pytest.mark.parametrize("grad_a, grad_b", [(True, True), (True, False), (False, True)])
def test_binary_saves_match_torch(ns, name, fn, roles, grad_a, grad_b):
    info = op_for(ns, name)
    (ov,) = info.match(["tensor", "tensor"])
    wants = {r for r, g in zip(roles, (grad_a, grad_b)) if g}
    saved = set(ov.saved_inputs(wants))

    def build():
        a, b = torch.rand(4) * 0.6 + 0.2, torch.rand(4) * 0.6 + 0.2
        if grad_a:
            a = a.requires_grad_() * 1.0
        if grad_b:
            b = b.requires_grad_() * 1.0
        return {"a": a, "b": b}, fn(a, b)

    for key, role in zip("ab", roles):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raised = _backward_raises(build, lambda i, r, key=key: i[key].add_(0.0))
        assert raised == (role in saved), f"{role} with requires_grad {sorted(wants)}"


def test_cross_entropy_saves_the_class_indices_not_the_logits():
    saved = set(op_for("F", "cross_entropy").overloads[0].saved_inputs({"input"}))
    assert saved == {"target", "weight"}

    def build():
        logits = _leaf(3, 4) * 1.0
        target = torch.tensor([0, 3, 1])
        return {"input": logits, "target": target}, F.cross_entropy(logits, target)

    assert not _backward_raises(build, lambda i, r: i["input"].add_(1.0))
    assert _backward_raises(build, lambda i, r: i["target"].add_(0))


# --- gradients that do not flow -------------------------------------------------------------


@pytest.mark.parametrize(
    "ns, name, call",
    [
        ("torch", "argmax", lambda x: torch.argmax(x)),
        ("torch", "argsort", lambda x: torch.argsort(x)),
        ("torch", "eq", lambda x: torch.eq(x, 0.5)),
        ("operator", "__gt__", lambda x: x > 0.5),
        ("torch", "isnan", torch.isnan),
        ("torch", "nonzero", torch.nonzero),
        ("Tensor", "long", lambda x: x.long()),
        ("Tensor", "bool", lambda x: x.bool()),
        ("torch", "isfinite", torch.isfinite),
        ("torch", "bucketize", lambda x: torch.bucketize(x, torch.tensor([0.5]))),
    ],
)
def test_no_gradient_results(ns, name, call):
    info = op_for(ns, name)
    assert info.no_grad and info.integral
    out = call(_leaf(5))
    assert not out.requires_grad and not out.dtype.is_floating_point


@pytest.mark.parametrize("name", ["round", "floor", "ceil", "trunc", "sign", "sgn"])
def test_zero_gradient_results(name):
    assert op_for("torch", name).zero_grad
    x = _leaf(5, low=-2, high=2)
    getattr(torch, name)(x * 3).sum().backward()
    assert torch.equal(x.grad, torch.zeros_like(x))


def test_indices_outputs_carry_no_gradient():
    x = _leaf(5)
    for name, out in (("sort", torch.sort(x)), ("topk", torch.topk(x, 2))):
        flags = [o.grad for o in op_for("torch", name).overloads[0].outputs]
        assert flags == [out[0].requires_grad, out[1].requires_grad] == [True, False]


def test_floor_divide_backward_raises_as_the_table_says():
    assert op_for("torch", "floor_divide").grad_raises
    with pytest.raises(RuntimeError, match="not implemented"):
        torch.floor_divide(_leaf(3), 2).sum().backward()


# --- views share storage ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, call",
    [
        ("view", lambda x: x.view(6)),
        ("transpose", lambda x: x.transpose(0, 1)),
        ("t", lambda x: x.t()),
        ("unsqueeze", lambda x: x.unsqueeze(0)),
        ("expand", lambda x: x.expand(2, 2, 3)),
        ("narrow", lambda x: x.narrow(1, 0, 2)),
        ("reshape", lambda x: x.reshape(6)),
        ("flatten", lambda x: x.flatten()),
        ("clone", lambda x: x.clone()),
        ("exp", lambda x: x.exp()),
        ("contiguous", lambda x: x.t().contiguous()),
    ],
)
def test_views_share_storage(name, call):
    x = torch.rand(2, 3)
    out = call(x)
    shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    info = op_for("Tensor", name)
    if info.view:
        assert shares
    if not info.may_alias:
        assert not shares
    assert info.may_alias == (name not in ("clone", "exp"))


def test_may_return_self():
    x = torch.rand(3)
    assert x.to(torch.float32) is x and x.contiguous() is x and x.float() is x
    assert x.double() is not x


# --- domains: each fact holds on a concrete value ---------------------------------------------

# condition -> sample values of the argument (and of the exponent, for pow)
SAMPLES = {
    "zero": [0.0],
    "negative": [-1.0],
    "minus_one": [-1.0],
    "below_minus_one": [-2.0],
    "unit": [1.0, -1.0],
    "outside_unit": [1.5],
    "one": [1.0],
    "below_one": [0.5],
    "zero_or_one": [0.0, 1.0],
    "outside_zero_one": [1.5],
    "nonpositive_int": [0.0, -1.0, -2.0],
    "negative_int": [-1.0, -2.0],
    "large": [200.0],
    "fractional_exponent": [0.0],
    "negative_exponent": [0.0],
}
EXPONENT = {"fractional_exponent": 0.5, "negative_exponent": -1.0, "negative": 0.5}

# how to call each op with domain facts: (callable(args dict) -> result, default argument values)
_BINARY = lambda fn: (lambda a: fn(a["self"], a["other"]), {"self": 1.0, "other": 2.0})
CALLS = {
    "div": _BINARY(torch.div),
    "divide": _BINARY(torch.divide),
    "true_divide": _BINARY(torch.true_divide),
    "xlogy": _BINARY(torch.xlogy),
    "special_xlogy": _BINARY(torch.special.xlogy),
    "special_xlog1py": _BINARY(torch.special.xlog1py),
    "remainder": _BINARY(torch.remainder),
    "fmod": _BINARY(torch.fmod),
    "hypot": _BINARY(torch.hypot),
    "pow": (lambda a: torch.pow(a["self"], a["exponent"]), {"self": 2.0, "exponent": 2.0}),
    "polygamma": (lambda a: torch.polygamma(1, a["self"]), {"self": 2.0}),
    "special_polygamma": (lambda a: torch.special.polygamma(1, a["self"]), {"self": 2.0}),
    "addcdiv": (
        lambda a: torch.addcdiv(a["self"], a["tensor1"], a["tensor2"]),
        {"self": 1.0, "tensor1": 1.0, "tensor2": 2.0},
    ),
    "kl_div": (lambda a: torch.kl_div(a["self"], a["target"]), {"self": 0.5, "target": 0.5}),
    "poisson_nll_loss": (
        lambda a: torch.poisson_nll_loss(a["input"], a["target"], True, False, 1e-8, 1),
        {"input": 0.5, "target": 0.5},
    ),
}


def _domain_ops():
    ops = {}
    for line in _table.DOMAINS.strip("\n").split("\n"):
        op, ovl, arg, at, effect, why, given = line.split("\t")
        # decompositions and in-place forms repeat their ops' facts; _foreach ops are internal
        if "." in op or op.startswith("_") or op.endswith("_"):
            continue
        ops.setdefault(op, set()).add((arg, at, effect, given))
    return ops


DOMAIN_OPS = _domain_ops()


@pytest.mark.parametrize("op", sorted(DOMAIN_OPS))
def test_domain_facts_hold(op):
    call, defaults = CALLS.get(op, (None, {"self": 0.5}))
    if call is None:
        fn = (
            getattr(torch, op, None)
            or getattr(torch.special, op.replace("special_", ""), None)
            or getattr(torch.linalg, op.replace("linalg_", ""), None)
        )
        assert fn is not None, f"no way to call {op}: add it to CALLS"
        call = lambda a, fn=fn: fn(*a.values())
    for arg, at, effect, given in sorted(DOMAIN_OPS[op]):
        if arg == "result":
            continue  # a fact on the result: its input side is stated by hand beside it
        for value in SAMPLES[at]:
            args = {k: torch.tensor([v], dtype=torch.float32, requires_grad=True) for k, v in defaults.items()}
            args[arg] = torch.tensor([value], requires_grad=True)
            if given and at in EXPONENT:
                args[given] = torch.tensor([EXPONENT[at]], requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = call(args)
                out.sum().backward()
            v, g = out.item(), args[arg].grad.item()
            what = f"{op}({arg}={value}): {at} -> {effect}, got value {v}, grad {g}"
            if effect == "value_inf":
                assert math.isinf(v), what
            elif effect == "value_nan":
                assert math.isnan(v), what
            else:
                assert not math.isfinite(g) or abs(g) > 1e30, what


def test_safe_looking_ops_are_safe_where_the_table_has_no_fact():
    # the facts' absence is a claim too: norm at 0 has gradient 0, normalize guards its divisor
    x = torch.zeros(3, requires_grad=True)
    x.norm().backward()
    assert torch.isfinite(x.grad).all() and op_for("torch", "norm").domain == ()
    y = torch.zeros(2, 3, requires_grad=True)
    F.normalize(y).sum().backward()
    assert torch.isfinite(y.grad).all() and op_for("F", "normalize").domain == ()


# --- decompositions: what autograd records -----------------------------------------------------


def _node_names(t):
    seen, stack, out = set(), [t.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        name = type(n).__name__
        out.add(name.rsplit("Backward", 1)[0].lower())
        stack += [f for f, _ in n.next_functions]
    return out


def _node(step):
    return step.split(".")[0].lstrip("_").replace("_", "").removesuffix("forward").lower()


SAMPLE_CALLS = [
    ("F", "softmax", lambda x: F.softmax(x, 1)),
    ("F", "log_softmax", lambda x: F.log_softmax(x, 1)),
    ("nn", "Softmax", lambda x: torch.nn.Softmax(1)(x)),
    ("F", "softmin", lambda x: F.softmin(x, 1)),
    ("F", "cross_entropy", lambda x: F.cross_entropy(x, torch.tensor([0, 1]))),
    ("nn", "CrossEntropyLoss", lambda x: torch.nn.CrossEntropyLoss()(x, torch.tensor([0, 1]))),
    ("F", "nll_loss", lambda x: F.nll_loss(x, torch.tensor([0, 1]))),
    ("F", "linear", lambda x: F.linear(x, torch.rand(2, 3), torch.rand(2))),
    ("nn", "Linear", lambda x: torch.nn.Linear(3, 2)(x)),
    ("F", "relu", F.relu),
    ("nn", "ReLU", lambda x: torch.nn.ReLU()(x)),
    ("F", "relu6", F.relu6),
    ("F", "selu", F.selu),
    ("F", "elu", F.elu),
    ("F", "gelu", F.gelu),
    ("nn", "Sigmoid", lambda x: torch.nn.Sigmoid()(x)),
    ("F", "mse_loss", lambda x: F.mse_loss(x, torch.rand(2, 3))),
    ("F", "l1_loss", lambda x: F.l1_loss(x, torch.rand(2, 3))),
    ("F", "binary_cross_entropy", lambda x: F.binary_cross_entropy(x.sigmoid(), torch.rand(2, 3))),
    ("F", "binary_cross_entropy_with_logits", lambda x: F.binary_cross_entropy_with_logits(x, torch.rand(2, 3))),
    ("F", "normalize", F.normalize),
    ("F", "layer_norm", lambda x: F.layer_norm(x, (3,))),
    ("nn", "LayerNorm", lambda x: torch.nn.LayerNorm(3)(x)),
    ("F", "rms_norm", lambda x: F.rms_norm(x, (3,))),
    ("torch", "norm", torch.norm),
    ("Tensor", "norm", lambda x: x.norm()),
    ("torch", "square", torch.square),
    ("F", "kl_div", lambda x: F.kl_div(x, torch.rand(2, 3), reduction="sum")),
    ("F", "dropout", lambda x: F.dropout(x, 0.5)),
    ("F", "softsign", F.softsign),
    ("F", "logsigmoid", F.logsigmoid),
    ("torch", "matmul", lambda x: torch.matmul(x, torch.rand(3, 2))),
    ("operator", "__rtruediv__", lambda x: 1.0 / x),
    ("operator", "__rpow__", lambda x: 2.0**x),
    ("Tensor", "to", lambda x: x.to(torch.float64)),
    ("Tensor", "double", lambda x: x.double()),
    ("F", "max_pool1d", lambda x: F.max_pool1d(x.unsqueeze(0), 2)),
    ("F", "conv1d", lambda x: F.conv1d(x.unsqueeze(0), torch.rand(1, 2, 2))),
    ("nn", "PReLU", lambda x: torch.nn.PReLU()(x)),
    ("torch", "outer", lambda x: torch.outer(x[0], x[1])),
    ("torch.special", "expit", torch.special.expit),
    ("torch", "divide", lambda x: torch.divide(x, 2.0)),
]


@pytest.mark.parametrize("ns, name, call", SAMPLE_CALLS, ids=[f"{c[0]}.{c[1]}" for c in SAMPLE_CALLS])
def test_decompositions_match_the_graph_torch_records(ns, name, call):
    info = op_for(ns, name)
    assert info is not None
    x = _leaf(2, 3)
    recorded = _node_names(call(x))
    ov = info.overloads[0]
    # the last op a decomposition runs (or the op itself) is the result's backward node
    last = ov.steps[-1] if ov.steps else info.op
    while True:
        inner = op_for("aten", last.split(".")[0])
        inner_ov = next((o for o in inner.overloads if o.name == last), inner.overloads[0]) if inner else None
        if inner_ov is None or not inner_ov.steps:
            break
        last = inner_ov.steps[-1]
    assert _node(last) in recorded, f"{last} not among {sorted(recorded)}"

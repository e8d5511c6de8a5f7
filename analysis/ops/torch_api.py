"""What the engine knows about PyTorch's API, as data: the one place engine modules import torch
facts from.

Two sources, joined here: the generated sets (`_engine_sets.py`, written by `python -m
gradaudit.analysis.ops.generate` from torch's derivatives.yaml, native_functions.yaml and
tags.yaml through the op table (facade.py), and from torch's Python classes (python_api.py:
module parameters and flags, optimizers, schedulers)), and the facts no table holds
(hand_facts.py, each with its reason). Only ops listed here are taken to save tensors; an op
the engine does not know saves nothing, so GA110 stays quiet rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from . import _engine_sets as _sets
from . import hand_facts as H

# The function or tensor method each module's forward() runs, by its short name (nn.ReLU6:
# hardtanh, nn.MSELoss: mse_loss, nn.Flatten: flatten); MODULE_FORWARD has its namespace.
MODULE_FORWARD = _sets.MODULE_FORWARD
MODULE_FUNCTIONS = {m: fn.rpartition(".")[2] for m, fn in MODULE_FORWARD.items()}


def _with_modules(names: Iterable[str]) -> frozenset[str]:
    """Functional names and the torch.nn modules whose forward() runs one of them (nn.Softmax
    with softmax): the numerical facts of a module are those of its functional."""
    functions = frozenset(names)
    return functions | frozenset(m for m, fn in MODULE_FUNCTIONS.items() if fn in functions)


# --- modules -------------------------------------------------------------------------------

# name -> (parameter names, {flag: (positional index or None, keyword, default)}) where a flag
# turns parameters off: 'bias' drops the bias, 'affine' drops both. Names and flags from torch's
# constructors (python_api.py); which modules the engine models this way: hand_facts.
ModuleFlags = dict[str, tuple[int | None, str, bool]]
# (the generated literal mixes int and None positions, which mypy widens to `object`)
_MODULE_FLAGS = cast("dict[str, ModuleFlags]", _sets.MODULE_FLAGS)
PARAM_MODULES: dict[str, tuple[tuple[str, ...], ModuleFlags]] = {
    name: (_sets.MODULE_PARAMS[name], _MODULE_FLAGS.get(name, {})) for name in H.PARAM_MODULES
}

# torch.nn module classes without a `weight` or `bias` attribute (`hasattr(nn.ReLU(), "weight")` is
# False): no parameter of that name (generated from torch), and not a loss (a loss's optional class
# weights are a buffer named `weight`)
NO_WEIGHT_ATTRS: dict[str, frozenset[str]] = {
    name: frozenset(a for a in ("weight", "bias") if a not in _sets.MODULE_PARAMS.get(name, ()))
    for name in _sets.NN_MODULES
    if not name.endswith("Loss")
}

RECURRENT = frozenset(H.RECURRENT)

# Torch modules without parameters: name -> positional index of `inplace` (None when it has none).
FREE_MODULES = {name: _sets.MODULE_INPLACE.get(name) for name in H.FREE_MODULES}
STATE_REGISTERS = frozenset(H.STATE_REGISTERS)
PLAIN_BUILTINS = frozenset(H.PLAIN_BUILTINS)

# The losses among them (their constructor takes a `reduction`).
LOSS_MODULES = frozenset(n for n in FREE_MODULES if n in _sets.MODULE_REDUCTION)

CONTAINERS = frozenset(H.CONTAINERS)
KEYED_CONTAINERS = frozenset(H.KEYED_CONTAINERS)
MODULE_CONTAINERS = frozenset(H.MODULE_CONTAINERS)

# Parameter-free modules whose forward() is a view of its input (Flatten: Tensor.flatten).
VIEW_MODULES = frozenset(
    m for m in FREE_MODULES if MODULE_FORWARD.get(m, "").startswith("Tensor.") and MODULE_FUNCTIONS[m] in _sets.VIEW_OPS
)

# What a torch module's forward saves for backward: 'input', 'output', or nothing. From the op
# table (what forward() calls); recurrent modules and cells, and MultiheadAttention, whose
# forward the table does not decompose, save their input (every gate is a product with it).
MODULE_SAVES = {**dict.fromkeys(H.SAVES_INPUT_MODULES, "input"), **_sets.MODULE_SAVES}

# nn.Module's methods, those that return the module itself (`model.to(device)`), and its attributes.
MODULE_METHODS = _sets.MODULE_METHODS
MODULE_SELF_METHODS = _sets.MODULE_SELF_METHODS
MODULE_ATTRIBUTES = frozenset(H.MODULE_ATTRIBUTES)

MODULE_DIM_ARGS = H.MODULE_DIM_ARGS
WRAPPERS = frozenset(H.WRAPPERS)
PARAMETER_CLASSES = H.PARAMETER_CLASSES
VARIABLE_CLASSES = frozenset(H.VARIABLE_CLASSES)
GRAD_CLEARING = frozenset(H.GRAD_CLEARING)
CLIP_FUNCTIONS = frozenset(H.CLIP_FUNCTIONS)
INIT_PREFIX = H.INIT_PREFIX


def recurrent_params(args: list[Any], kwargs: dict[str, Any]) -> list[str] | None:
    """Parameter names of nn.RNN/LSTM/GRU(input, hidden, num_layers, ...) given constants."""
    layers = kwargs.get("num_layers", args[2] if len(args) > 2 else 1)
    bidir = kwargs.get("bidirectional", False)
    bias = kwargs.get("bias", True)
    if not isinstance(layers, int) or layers < 1 or layers > 64:
        return None
    names = []
    for layer in range(layers):
        for suffix in ("", "_reverse") if bidir is True else ("",):
            names += [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
            if bias is not False:
                names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
    return names


# --- optimizers, schedulers, scalers -----------------------------------------------------

# torch.optim's optimizers and lr_scheduler's schedulers (their classes, read by python_api.py).
# Third-party optimizers are library facts (libraries/tables.py).
OPTIMIZERS = _sets.OPTIMIZERS
SCHEDULERS = _sets.SCHEDULERS
SCALERS = frozenset(H.SCALERS)
CHAINABLE_SCHEDULERS = frozenset(H.CHAINABLE_SCHEDULERS)
MAY_RETURN_SELF = frozenset(H.MAY_RETURN_SELF)
SELF_FOR_A_CPU_LEAF = frozenset(H.SELF_FOR_A_CPU_LEAF)
PROJECTIONS = frozenset(H.PROJECTIONS)
PARAMETER_SEQUENCES = frozenset(H.PARAMETER_SEQUENCES)

# --- grad mode ---------------------------------------------------------------------------------

NOGRAD_CTX = frozenset(H.NOGRAD_CTX)
GRAD_CTX = frozenset(H.GRAD_CTX)
SET_GRAD_CTX = frozenset(H.SET_GRAD_CTX)
AUTOCAST_CTX = frozenset(H.AUTOCAST_CTX)
IS_GRAD_ENABLED = H.IS_GRAD_ENABLED
GRAD_MODE_NAMES = frozenset(H.GRAD_MODE_NAMES)
PROCESS_FUNCTIONS = frozenset(H.PROCESS_FUNCTIONS)
NUMPY_MODULES = frozenset(H.NUMPY_MODULES)

# --- tensor operations ---------------------------------------------------------------------
# Derived from torch's own autograd tables (see ops/facade.py for how each set is derived), with
# the Python-level knowledge the YAML cannot have (hand_facts.py).

# Views share storage with their input: an in-place change through them changes the input.
VIEW_OPS = _sets.VIEW_OPS
SPLIT_OPS = _sets.SPLIT_OPS

# Result has no gradient (integer or bool), or a zero one, or backward raises for it.
NONDIFF_OPS = _sets.NONDIFF_OPS

# Fresh tensors that do not depend on their arguments' values: the YAML's, plus the Python-level
# constructors (torch.tensor and the legacy typed constructors are not ATen ops).
FACTORIES = _sets.FACTORIES | frozenset(H.PY_FACTORIES)
# Factories that copy their data argument (a tensor given to them loses its graph: GA104).
REWRAP = frozenset(H.REWRAP)
ACCUMULATING_METHODS = frozenset(H.ACCUMULATING_METHODS)
SHARING_FACTORIES = frozenset(H.SHARING_FACTORIES)
DATA_FACTORIES = frozenset(H.DATA_FACTORIES)
# Tensor methods that make a fresh tensor (x.new_zeros(...)), factories shaped like a tensor
# argument (zeros_like), sized by their positional arguments (zeros(2, 3)), filled with `fill_value`.
NEW_TENSOR_METHODS = frozenset(n for n in FACTORIES if n.startswith("new_") or n == "new")
LIKE_FACTORIES = frozenset(n for n in FACTORIES if n.endswith("_like"))
SIZED_FACTORIES = _sets.SIZED_FACTORIES
FILLED_FACTORIES = _sets.FILLED_FACTORIES

# Ops whose backward uses their output (an in-place change of it later breaks backward).
SAVES_OUTPUT = _sets.SAVES_OUTPUT
# every public name of torch.Tensor (methods and properties)
TENSOR_ATTRIBUTES: frozenset[str] = _sets.TENSOR_ATTRIBUTES


def no_tensor_has(name: str) -> bool:
    """A public method name torch.Tensor does not have (`items`, a generator's `manual_seed`)."""
    return name not in TENSOR_ATTRIBUTES and not name.startswith("_")


# In-place Tensor methods that start a tensor over: its old value is lost (`w.data.uniform_(-k, k)`,
# `b.data.zero_()`), as nn.init does.
REFILLS = _sets.RANDOM_FILLS | frozenset(H.VALUE_FILLS)

# in-place Tensor methods -> positions of the arguments (after the receiver) that take no gradient
INPLACE_NONDIFF_ARGS: dict[str, tuple[int, ...]] = _sets.INPLACE_NONDIFF_ARGS
# Ops whose backward uses their first input at least when that input requires grad.
SAVES_INPUT = _sets.SAVES_INPUT
# Binary products: each operand is saved when the other needs a gradient.
PRODUCTS = _sets.PRODUCTS
# The divisor is saved whenever either operand needs a gradient, the dividend when the divisor does.
DIVISIONS = _sets.DIVISIONS
# Ops whose backward saves no tensor.
SAVE_NOTHING = _sets.SAVE_NOTHING

# Their derivative is zero almost everywhere (round, floor, sign): backward runs, nothing learns.
ZERO_GRAD_OPS = _sets.ZERO_GRAD_OPS
# Return (values, indices) where the indices carry no gradient (sort, topk, max(x, dim)), the
# fields they are read by, and those that also have an elementwise form (max(a, b)).
VALUES_INDICES = _sets.VALUES_INDICES
VALUES_INDICES_FIELDS = H.VALUES_INDICES_FIELDS
PACKING_CALLS = frozenset(H.PACKING_CALLS)
UNPACKING_CALLS = frozenset(H.UNPACKING_CALLS)
PACKED_FIELDS = frozenset(H.PACKED_FIELDS)
BINARY_VALUES_INDICES = _sets.VALUES_INDICES & _sets.POINTWISE_OPS
# Names of + - * / ** ({name: add|sub|mul|div|pow}, aliases included: divide, multiply, true_divide).
ARITH_OPS = _sets.ARITH_OPS
# Infinite wherever their second input (the divisor) is 0.
ZERO_DIVISOR_INF = _sets.ZERO_DIVISOR_INF
# Infinite gradient at 0 for a fractional exponent 0 < e < 1 (pow).
FRACTIONAL_POWERS = _sets.FRACTIONAL_POWERS
# F.* losses (they take a `reduction`), and the `reduction` values that give a scalar.
LOSS_FUNCTIONS = _sets.LOSS_FUNCTIONS
REDUCING_MODES = frozenset(H.REDUCING_MODES)
# The target each loss takes ('class', 'binary', 'regression'), functionals and modules.
LOSS_TARGETS = {
    **H.LOSS_TARGETS,
    **{m: H.LOSS_TARGETS[fn] for m, fn in MODULE_FUNCTIONS.items() if fn in H.LOSS_TARGETS},
}
# Losses over class indices: with reduction='none' the result drops the class dimension.
CLASS_LOSSES = frozenset(n for n, kind in LOSS_TARGETS.items() if kind == "class")

# In-place methods that are not data changes (Python-level or autograd bookkeeping; the YAML
# types them `Tensor(a!)` like any in-place op).
NOT_INPLACE = frozenset(H.NOT_INPLACE)

# Methods whose result is their input converted (values, shape and gradient kept, maybe the input
# itself: surface.MAY_RETURN_SELF says when), methods describing the tensor with Python numbers,
# methods giving Python values, properties that are views.
ALIAS_METHODS = _sets.MAY_RETURN_SELF | frozenset(H.CONVERSIONS)
METADATA_METHODS = frozenset(H.METADATA_METHODS)
TO_PYTHON = frozenset(H.TO_PYTHON)
READ_ONLY_MODEL_METHODS = frozenset(H.READ_ONLY_MODEL_METHODS)
GRAD_FILLING = frozenset(H.GRAD_FILLING)
ZERO_FACTORIES = frozenset(H.ZERO_FACTORIES)
VIEW_ATTRIBUTES = frozenset(H.VIEW_ATTRIBUTES)
METADATA_ATTRIBUTES = frozenset(H.METADATA_ATTRIBUTES)
INTEGRAL_DTYPE_WORDS = H.INTEGRAL_DTYPE_WORDS
F_PLAIN_FLOW = frozenset(H.F_PLAIN_FLOW)
# Methods that show a value the engine did not see being made is a tensor.
TENSORISH_METHODS = (
    ALIAS_METHODS
    | METADATA_METHODS
    | VIEW_OPS
    | SPLIT_OPS
    | NONDIFF_OPS
    | SAVES_INPUT
    | SAVES_OUTPUT
    | frozenset(H.TENSOR_ONLY_METHODS)
) - {"backward"}

# --- shapes ---------------------------------------------------------------------------------

# Ops whose result has their inputs' broadcast shape: the YAML's pointwise ops, the conversions,
# and the shape-keeping ops it does not tag.
ELEMENTWISE = _sets.POINTWISE_OPS | ALIAS_METHODS | frozenset(H.SAME_SHAPE)
# Reductions over `dim` (all dimensions without one), and where their dim and keepdim arguments are.
REDUCTIONS = _sets.REDUCTION_OPS | frozenset(H.UNTAGGED_REDUCTIONS)
DIM_ARGS = _sets.DIM_ARGS
# Ops taking a list of tensors first (cat, stack, hstack...).
TENSOR_LIST_OPS = _sets.TENSOR_LIST_OPS
RESHAPES = frozenset(H.RESHAPES)
MATRIX_PRODUCTS = frozenset(H.MATRIX_PRODUCTS)

# Modules with parameters whose forward() keeps the input's shape (the normalisations).
SHAPE_KEEPING_MODULES = frozenset(m for m in PARAM_MODULES if MODULE_FUNCTIONS.get(m) in ELEMENTWISE)

# --- value ranges (GA401-GA408) -----------------------------------------------------------------

PROBABILITIES = _with_modules(H.PROBABILITIES)
SIGMOIDS = _with_modules(H.SIGMOIDS)
FLOAT64_NAMES = frozenset(H.FLOAT64_NAMES)
NARROW_FLOAT_NAMES = frozenset(H.NARROW_FLOAT_NAMES)
SET_DEFAULT_DTYPE = frozenset(H.SET_DEFAULT_DTYPE)
SPAWN = frozenset(H.SPAWN)
PROCESS = frozenset(H.PROCESS)
TO_FLOAT64 = frozenset(H.TO_FLOAT64)
TO_NARROW_FLOAT = frozenset(H.TO_NARROW_FLOAT)
TO_DTYPE_ARG = frozenset(H.TO_DTYPE_ARG)
NONNEG_ZERO = _with_modules(H.NONNEG_ZERO)
SELECTIONS = frozenset(H.SELECTIONS)
# `getattr(torch.optim, args.optim)`: one of torch's optimizer classes, which one a setting says
PICKED_OPTIMIZER = "torch.optim.<one picked by name>"
SIZES = frozenset(H.SIZES)
ZERO_MASKING = _with_modules(H.ZERO_MASKING)
POOLS = _with_modules(H.POOLS)
DATA_RANGE_COUNTS = frozenset(H.DATA_RANGE_COUNTS)
MAGNITUDES = _with_modules(H.MAGNITUDES)
NORMS = frozenset(H.NORMS)
SPREADS = frozenset(H.SPREADS)
UNPADDED_EMBEDDINGS = frozenset(H.UNPADDED_EMBEDDINGS)
BIAS_OPERAND = frozenset(H.BIAS_OPERAND)
POSITIVE_IF_NONZERO = frozenset(H.POSITIVE_IF_NONZERO)
POSITIVE_OPS = _with_modules(H.POSITIVE_OPS)
EXPONENTIALS = _with_modules(H.EXPONENTIALS)
BOUNDED = _with_modules(H.BOUNDED)
UNIT_RANGE = _with_modules(H.UNIT_RANGE)
LINEAR = _with_modules(H.LINEAR)
KEEP = _with_modules(H.KEEP)
LOGS = frozenset(H.LOGS)
ROOTS = frozenset(H.ROOTS)
MASK_BUILDERS = frozenset(H.MASK_BUILDERS)
SUMS = frozenset(H.SUMS)
AXIS_PRODUCTS = frozenset(H.AXIS_PRODUCTS)
ORDER_STATISTICS = frozenset(H.ORDER_STATISTICS)
UPPER_BOUNDS = frozenset(H.UPPER_BOUNDS)
AT_LEAST_FIRST = frozenset(H.AT_LEAST_FIRST)
UPPER_CLAMPS = frozenset(H.UPPER_CLAMPS)
SOFTMAXES = _with_modules(H.SOFTMAXES)
# what reads a NaN of its input into the gradient (GA405: NaN dropped afterwards): the ops that
# save an input or their output, but not those that only select by it
NAN_READING = _with_modules(
    (SAVES_INPUT | SAVES_OUTPUT | PRODUCTS | DIVISIONS | frozenset(LOSS_FUNCTIONS)) - frozenset(H.NAN_SELECTING)
)
NAN_DROPPING = frozenset(H.NAN_DROPPING)
LOG_PROBABILITIES = _with_modules(H.LOG_PROBABILITIES)
REGRESSION_LOSSES = _with_modules(H.REGRESSION_LOSSES)
NAN_PASSING_ARITH = frozenset(H.NAN_PASSING_ARITH)
SCALING_ARITH = frozenset(H.SCALING_ARITH)
NAN_READING_ARITH = frozenset(H.NAN_READING_ARITH)
MASK_SELECTIONS = frozenset(H.MASK_SELECTIONS)
NAN_TESTS = frozenset(H.NAN_TESTS)
LOWER_CLAMPS = frozenset(H.LOWER_CLAMPS)
CLAMPS = frozenset(H.CLAMPS)
SCATTER_SUMS = frozenset(H.SCATTER_SUMS)
ELEMENT_MAXIMA = frozenset(H.ELEMENT_MAXIMA)
WHERE_GUARDS = frozenset(H.WHERE_GUARDS)
SAME_ZEROS = frozenset(H.SAME_ZEROS)
ONES_FACTORIES = frozenset(H.ONES_FACTORIES)
CONCATENATIONS = frozenset(H.CONCATENATIONS)

# --- Python's and NumPy's names for torch ops -----------------------------------------------------

MATH_TO_TORCH = H.MATH_TO_TORCH
NUMPY_TO_TORCH = H.NUMPY_TO_TORCH
NUMPY_HOPS = H.NUMPY_HOPS
FROM_NUMPY = frozenset(H.FROM_NUMPY)


def strip_torch_alias(qual: str) -> str:
    """Canonical dotted name: torch.nn.modules.linear.Linear -> torch.nn.Linear, etc."""
    if qual.startswith("torch.nn.modules."):
        parts = qual.split(".")
        return "torch.nn." + parts[-1]
    if qual.startswith("torch.optim.") and qual.count(".") >= 3 and not qual.startswith("torch.optim.lr_scheduler"):
        parts = qual.split(".")
        return "torch.optim." + parts[-1]
    if qual.startswith("torch.nn.parameter."):
        return "torch.nn." + qual.rsplit(".", 1)[-1]
    return qual


# a tensor's read-only methods: the value is read, nothing changes
TENSOR_READS = frozenset(H.TENSOR_READS) | TO_PYTHON | METADATA_METHODS | VIEW_OPS

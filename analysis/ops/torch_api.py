"""What the engine knows about PyTorch's API, as data.

Sources: the signatures in torch/nn/modules (module constructors, optimizers), and for tensor
ops the table generated from torch's derivatives.yaml and native_functions.yaml (analysis/ops;
this module re-exports the name sets the engine uses, `ops.op_for` has the rest). Only ops
listed here are taken to save tensors; an op the engine does not know saves nothing, so GA110
stays quiet rather than guess.
"""

from __future__ import annotations

from . import _engine_sets as _sets

# --- modules -------------------------------------------------------------------------------

# name -> (parameter names, {flag: (positional index, keyword, default)}) where a flag turns
# parameters off: 'bias' drops the bias, 'affine' drops both.
_LIN = (("weight", "bias"), {"bias": (2, "bias", True)})
_CONV = (("weight", "bias"), {"bias": (7, "bias", True)})
_CONVT = (("weight", "bias"), {"bias": (8, "bias", True)})
_BN = (("weight", "bias"), {"affine": (3, "affine", True)})
_IN = (("weight", "bias"), {"affine": (3, "affine", False)})

PARAM_MODULES = {
    "Linear": _LIN,
    "LazyLinear": (("weight", "bias"), {"bias": (1, "bias", True)}),
    "Bilinear": (("weight", "bias"), {"bias": (3, "bias", True)}),
    "Conv1d": _CONV,
    "Conv2d": _CONV,
    "Conv3d": _CONV,
    "ConvTranspose1d": _CONVT,
    "ConvTranspose2d": _CONVT,
    "ConvTranspose3d": _CONVT,
    "BatchNorm1d": _BN,
    "BatchNorm2d": _BN,
    "BatchNorm3d": _BN,
    "SyncBatchNorm": _BN,
    "InstanceNorm1d": _IN,
    "InstanceNorm2d": _IN,
    "InstanceNorm3d": _IN,
    "GroupNorm": (("weight", "bias"), {"affine": (3, "affine", True)}),
    "LayerNorm": (("weight", "bias"), {"affine": (2, "elementwise_affine", True), "bias": (3, "bias", True)}),
    "RMSNorm": (("weight",), {"affine": (2, "elementwise_affine", True)}),
    "Embedding": (("weight",), {}),
    "EmbeddingBag": (("weight",), {}),
    "PReLU": (("weight",), {}),
    "RNNCell": (("weight_ih", "weight_hh", "bias_ih", "bias_hh"), {"bias": (2, "bias", True)}),
    "LSTMCell": (("weight_ih", "weight_hh", "bias_ih", "bias_hh"), {"bias": (2, "bias", True)}),
    "GRUCell": (("weight_ih", "weight_hh", "bias_ih", "bias_hh"), {"bias": (2, "bias", True)}),
    "MultiheadAttention": (
        ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"),
        {"bias": (3, "bias", True)},
    ),
}

RECURRENT = {"RNN", "LSTM", "GRU"}

# Torch modules without parameters: name -> positional index of `inplace` (or None).
FREE_MODULES = {
    "ReLU": 0,
    "ReLU6": 0,
    "SiLU": 0,
    "Mish": 0,
    "SELU": 0,
    "Hardswish": 0,
    "Hardsigmoid": 0,
    "LeakyReLU": 1,
    "ELU": 1,
    "CELU": 1,
    "Dropout": 1,
    "Dropout1d": 1,
    "Dropout2d": 1,
    "Dropout3d": 1,
    "AlphaDropout": 1,
    "FeatureAlphaDropout": 1,
    "Hardtanh": 2,
    "Threshold": 2,
    "RReLU": 2,
    "GELU": None,
    "Tanh": None,
    "Sigmoid": None,
    "Softmax": None,
    "LogSoftmax": None,
    "Softmin": None,
    "Softplus": None,
    "Softsign": None,
    "Tanhshrink": None,
    "LogSigmoid": None,
    "GLU": None,
    "Identity": None,
    "Flatten": None,
    "Unflatten": None,
    "Upsample": None,
    "UpsamplingNearest2d": None,
    "UpsamplingBilinear2d": None,
    "PixelShuffle": None,
    "PixelUnshuffle": None,
    "ZeroPad2d": None,
    "ConstantPad1d": None,
    "ConstantPad2d": None,
    "ReflectionPad1d": None,
    "ReflectionPad2d": None,
    "ReplicationPad2d": None,
    "ChannelShuffle": None,
    "MaxPool1d": None,
    "MaxPool2d": None,
    "MaxPool3d": None,
    "AvgPool1d": None,
    "AvgPool2d": None,
    "AvgPool3d": None,
    "AdaptiveAvgPool1d": None,
    "AdaptiveAvgPool2d": None,
    "AdaptiveAvgPool3d": None,
    "AdaptiveMaxPool1d": None,
    "AdaptiveMaxPool2d": None,
    "AdaptiveMaxPool3d": None,
    "LPPool1d": None,
    "LPPool2d": None,
    "Fold": None,
    "Unfold": None,
    "CosineSimilarity": None,
    "PairwiseDistance": None,
    "LocalResponseNorm": None,
    # losses
    "L1Loss": None,
    "MSELoss": None,
    "CrossEntropyLoss": None,
    "NLLLoss": None,
    "BCELoss": None,
    "BCEWithLogitsLoss": None,
    "KLDivLoss": None,
    "SmoothL1Loss": None,
    "HuberLoss": None,
    "CTCLoss": None,
    "PoissonNLLLoss": None,
    "GaussianNLLLoss": None,
    "MarginRankingLoss": None,
    "HingeEmbeddingLoss": None,
    "MultiLabelMarginLoss": None,
    "SoftMarginLoss": None,
    "MultiLabelSoftMarginLoss": None,
    "CosineEmbeddingLoss": None,
    "MultiMarginLoss": None,
    "TripletMarginLoss": None,
    "TripletMarginWithDistanceLoss": None,
}

LOSS_MODULES = {n for n in FREE_MODULES if n.endswith("Loss")}

CONTAINERS = {"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"}

# What a torch module's forward saves for backward: 'input', 'output', or nothing. From the op
# table (what forward() calls); recurrent modules and cells, and MultiheadAttention, whose
# forward the table does not decompose, save their input (every gate is a product with it).
MODULE_SAVES = {
    **dict.fromkeys(RECURRENT, "input"),
    **dict.fromkeys(("RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention"), "input"),
    **_sets.MODULE_SAVES,
}


def recurrent_params(args, kwargs):
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

OPTIMIZERS = {
    "SGD",
    "Adam",
    "AdamW",
    "Adamax",
    "Adagrad",
    "Adadelta",
    "RMSprop",
    "Rprop",
    "ASGD",
    "NAdam",
    "RAdam",
    "LBFGS",
    "SparseAdam",
    "Adafactor",
    "Muon",
    # common third-party optimizers take the same (params, ...) signature
    "Lamb",
    "LAMB",
    "Lion",
    "FusedAdam",
    "FusedLAMB",
    "FusedSGD",
    "AdamW8bit",
    "Adam8bit",
    "PagedAdamW",
    "PagedAdamW8bit",
    "AdaBelief",
    "Ranger",
    "NovoGrad",
    "Adan",
    "Sophia",
    "MADGRAD",
    "Shampoo",
    "AdamP",
    "SGDP",
    "LARS",
    "Lookahead",
}

SCHEDULERS = {
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "ReduceLROnPlateau",
    "LambdaLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "CyclicLR",
    "LinearLR",
    "ConstantLR",
    "SequentialLR",
    "ChainedScheduler",
    "PolynomialLR",
}

SCALERS = {"GradScaler"}

# --- tensor operations ---------------------------------------------------------------------
# Derived from torch's own autograd tables (analysis/ops: generated from derivatives.yaml and
# native_functions.yaml, see ops/facade.py for how each set is derived). Only Python-level
# knowledge the YAML cannot have is written here.

# Views share storage with their input: an in-place change through them changes the input.
VIEW_OPS = _sets.VIEW_OPS
SPLIT_OPS = _sets.SPLIT_OPS

# Result has no gradient (integer or bool), or a zero one, or backward raises for it.
NONDIFF_OPS = _sets.NONDIFF_OPS

# Fresh tensors that do not depend on their arguments' values: the YAML's, plus the Python-level
# constructors (torch.tensor and the legacy typed constructors are not ATen ops).
_PY_FACTORIES = {
    "tensor",
    "as_tensor",
    "from_numpy",
    "frombuffer",
    "from_file",
    "sparse_coo_tensor",
    "Tensor",
    "FloatTensor",
    "LongTensor",
    "DoubleTensor",
    "IntTensor",
    "BoolTensor",
    "HalfTensor",
    "ByteTensor",
    "BFloat16Tensor",
    "new_tensor",
}
FACTORIES = _sets.FACTORIES | _PY_FACTORIES
# Factories that copy their data argument (a tensor given to them loses its graph: GA104).
REWRAP = {
    "tensor",
    "Tensor",
    "FloatTensor",
    "LongTensor",
    "DoubleTensor",
    "IntTensor",
    "HalfTensor",
    "BoolTensor",
    "ByteTensor",
    "BFloat16Tensor",
    "new_tensor",
    "scalar_tensor",
}

# Ops whose backward uses their output (an in-place change of it later breaks backward).
SAVES_OUTPUT = _sets.SAVES_OUTPUT
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
# Return (values, indices) where the indices carry no gradient (sort, topk, max(x, dim)).
VALUES_INDICES = _sets.VALUES_INDICES
# Names of + - * / ** ({name: add|sub|mul|div|pow}, aliases included: divide, multiply, true_divide).
ARITH_OPS = _sets.ARITH_OPS
# Infinite wherever their second input (the divisor) is 0.
ZERO_DIVISOR_INF = _sets.ZERO_DIVISOR_INF
# Infinite gradient at 0 for a fractional exponent 0 < e < 1 (pow).
FRACTIONAL_POWERS = _sets.FRACTIONAL_POWERS
# F.* losses (they take a `reduction`).
LOSS_FUNCTIONS = _sets.LOSS_FUNCTIONS

# In-place methods that are not data changes (Python-level or autograd bookkeeping; the YAML
# types them `Tensor(a!)` like any in-place op).
NOT_INPLACE = {
    "requires_grad_",
    "share_memory_",
    "retain_grad",
    "detach_",
    "resize_",
    "record_stream",
    "pin_memory",
    "set_",
    "grad_",
    "register_hook",
}

NUMPY_MODULES = {"numpy", "np", "scipy"}

# nn.init functions run under no_grad; they modify parameters legitimately.
INIT_PREFIX = "torch.nn.init."

# Grad-mode context managers and decorators.
NOGRAD_CTX = {
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
    "torch.autograd.grad_mode.inference_mode",
}
GRAD_CTX = {"torch.enable_grad", "torch.autograd.enable_grad"}
SET_GRAD_CTX = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}
AUTOCAST_CTX = {"torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast"}


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


def param_count_of(name: str) -> int | None:
    spec = PARAM_MODULES.get(name)
    if spec is None:
        return 0 if name in FREE_MODULES else None
    return len(spec[0])

"""What the engine knows about PyTorch's API, as data.

Sources: the signatures in torch/nn/modules and the `derivatives.yaml` of torch 2.x (which
tensors each backward formula saves). Only ops listed here are taken to save tensors; an op
the engine does not know saves nothing, so GA110 stays quiet rather than guess.
"""
from __future__ import annotations

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
    "Conv1d": _CONV, "Conv2d": _CONV, "Conv3d": _CONV,
    "ConvTranspose1d": _CONVT, "ConvTranspose2d": _CONVT, "ConvTranspose3d": _CONVT,
    "BatchNorm1d": _BN, "BatchNorm2d": _BN, "BatchNorm3d": _BN, "SyncBatchNorm": _BN,
    "InstanceNorm1d": _IN, "InstanceNorm2d": _IN, "InstanceNorm3d": _IN,
    "GroupNorm": (("weight", "bias"), {"affine": (3, "affine", True)}),
    "LayerNorm": (("weight", "bias"), {"affine": (2, "elementwise_affine", True), "bias": (3, "bias", True)}),
    "RMSNorm": (("weight",), {"affine": (2, "elementwise_affine", True)}),
    "Embedding": (("weight",), {}),
    "EmbeddingBag": (("weight",), {}),
    "PReLU": (("weight",), {}),
    "RNNCell": (("weight_ih", "weight_hh", "bias_ih", "bias_hh"), {"bias": (2, "bias", True)}),
    "LSTMCell": (("weight_ih", "weight_hh", "bias_ih", "bias_hh"), {"bias": (2, "bias", True)}),
    "GRUCell": (("weight_ih", "weight_hh", "bias_ih", "bias_hh"), {"bias": (2, "bias", True)}),
    "MultiheadAttention": (("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"),
                           {"bias": (3, "bias", True)}),
}

RECURRENT = {"RNN", "LSTM", "GRU"}

# Torch modules without parameters: name -> positional index of `inplace` (or None).
FREE_MODULES = {
    "ReLU": 0, "ReLU6": 0, "SiLU": 0, "Mish": 0, "SELU": 0, "Hardswish": 0, "Hardsigmoid": 0,
    "LeakyReLU": 1, "ELU": 1, "CELU": 1, "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1,
    "Dropout3d": 1, "AlphaDropout": 1, "FeatureAlphaDropout": 1, "Hardtanh": 2, "Threshold": 2,
    "RReLU": 2,
    "GELU": None, "Tanh": None, "Sigmoid": None, "Softmax": None, "LogSoftmax": None,
    "Softmin": None, "Softplus": None, "Softsign": None, "Tanhshrink": None, "LogSigmoid": None,
    "GLU": None, "Identity": None, "Flatten": None, "Unflatten": None, "Upsample": None,
    "UpsamplingNearest2d": None, "UpsamplingBilinear2d": None, "PixelShuffle": None,
    "PixelUnshuffle": None, "ZeroPad2d": None, "ConstantPad1d": None, "ConstantPad2d": None,
    "ReflectionPad1d": None, "ReflectionPad2d": None, "ReplicationPad2d": None, "ChannelShuffle": None,
    "MaxPool1d": None, "MaxPool2d": None, "MaxPool3d": None, "AvgPool1d": None, "AvgPool2d": None,
    "AvgPool3d": None, "AdaptiveAvgPool1d": None, "AdaptiveAvgPool2d": None,
    "AdaptiveAvgPool3d": None, "AdaptiveMaxPool1d": None, "AdaptiveMaxPool2d": None,
    "AdaptiveMaxPool3d": None, "LPPool1d": None, "LPPool2d": None, "Fold": None, "Unfold": None,
    "CosineSimilarity": None, "PairwiseDistance": None, "LocalResponseNorm": None,
    # losses
    "L1Loss": None, "MSELoss": None, "CrossEntropyLoss": None, "NLLLoss": None, "BCELoss": None,
    "BCEWithLogitsLoss": None, "KLDivLoss": None, "SmoothL1Loss": None, "HuberLoss": None,
    "CTCLoss": None, "PoissonNLLLoss": None, "GaussianNLLLoss": None, "MarginRankingLoss": None,
    "HingeEmbeddingLoss": None, "MultiLabelMarginLoss": None, "SoftMarginLoss": None,
    "MultiLabelSoftMarginLoss": None, "CosineEmbeddingLoss": None, "MultiMarginLoss": None,
    "TripletMarginLoss": None, "TripletMarginWithDistanceLoss": None,
}

LOSS_MODULES = {n for n in FREE_MODULES if n.endswith("Loss")}

CONTAINERS = {"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"}

# What a torch module's forward saves for backward: 'input', 'output', or nothing.
MODULE_SAVES = {
    **{n: "input" for n in PARAM_MODULES},
    **{n: "input" for n in RECURRENT},
    "ReLU": "output", "Sigmoid": "output", "Tanh": "output", "Softmax": "output",
    "LogSoftmax": "output", "ELU": "output", "Softmin": "output",
    "LeakyReLU": "input", "GELU": "input", "SiLU": "input", "Mish": "input", "Softplus": "input",
    "Hardtanh": "input", "ReLU6": "input", "Hardswish": "input", "MaxPool1d": "input",
    "MaxPool2d": "input", "MaxPool3d": "input",
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
    "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "ASGD", "NAdam",
    "RAdam", "LBFGS", "SparseAdam", "Adafactor", "Muon",
    # common third-party optimizers take the same (params, ...) signature
    "Lamb", "LAMB", "Lion", "FusedAdam", "FusedLAMB", "FusedSGD", "AdamW8bit", "Adam8bit",
    "PagedAdamW", "PagedAdamW8bit", "AdaBelief", "Ranger", "NovoGrad", "Adan", "Sophia", "MADGRAD",
    "Shampoo", "AdamP", "SGDP", "LARS", "Lookahead",
}

SCHEDULERS = {
    "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "ReduceLROnPlateau", "LambdaLR", "MultiplicativeLR", "OneCycleLR", "CyclicLR", "LinearLR",
    "ConstantLR", "SequentialLR", "ChainedScheduler", "PolynomialLR",
}

SCALERS = {"GradScaler"}

# --- tensor operations ---------------------------------------------------------------------

# Views share storage with their input: an in-place change through them changes the input.
VIEW_OPS = {
    "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "squeeze", "unsqueeze",
    "expand", "expand_as", "flatten", "unflatten", "narrow", "select", "t", "diagonal", "movedim",
    "moveaxis", "swapaxes", "swapdims", "unfold", "as_strided", "real", "imag", "view_as_real",
    "view_as_complex", "squeeze_", "unsqueeze_", "T", "mT", "H", "mH",
}
SPLIT_OPS = {"chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes"}

# Result has no gradient (integer or boolean), or a zero one.
NONDIFF_OPS = {
    "argmax", "argmin", "argsort", "round", "floor", "ceil", "trunc", "sign", "sgn", "eq", "ne", "lt",
    "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal", "isnan",
    "isinf", "isfinite", "isclose", "isposinf", "isneginf", "bincount", "nonzero", "unique",
    "unique_consecutive", "searchsorted", "bucketize", "count_nonzero", "logical_and",
    "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_not",
    "bitwise_xor", "long", "int", "bool", "byte", "short", "char", "heaviside", "multinomial",
    "bernoulli", "equal", "allclose", "any", "all", "histc", "histogram", "signbit",
}

# Fresh tensors that do not depend on their arguments' values.
FACTORIES = {
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
    "randperm", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like", "normal", "Tensor", "FloatTensor",
    "LongTensor", "DoubleTensor", "IntTensor", "BoolTensor", "HalfTensor", "ByteTensor",
    "BFloat16Tensor", "tril_indices", "triu_indices", "meshgrid_indices", "empty_strided",
    "scalar_tensor", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "frombuffer",
    "from_file", "sparse_coo_tensor",
}
_LIKE_FROM_DATA = {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                   "randint_like", "new_zeros", "new_ones", "new_empty", "new_full"}
# Factories that copy their data argument (a tensor given to them loses its graph: GA104).
REWRAP = {"tensor", "Tensor", "FloatTensor", "LongTensor", "DoubleTensor", "IntTensor", "HalfTensor",
          "BoolTensor", "ByteTensor", "BFloat16Tensor", "new_tensor", "scalar_tensor"}

# Ops whose backward uses their output (an in-place change of it later breaks backward).
SAVES_OUTPUT = {
    "exp", "sigmoid", "tanh", "softmax", "log_softmax", "relu", "sqrt", "rsqrt", "expm1", "exp2",
    "elu", "selu", "celu", "reciprocal", "softmin", "cumprod", "logsumexp", "norm", "prod", "std",
    "logit", "sinc", "pow_tensor",
}
# Ops whose backward uses their (first) input.
SAVES_INPUT = {
    "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "abs", "pow", "norm", "std", "var", "prod", "logsumexp", "clamp", "clip",
    "clamp_min", "clamp_max", "gelu", "silu", "mish", "softplus", "leaky_relu", "hardtanh", "relu6",
    "hardswish", "erf", "erfc", "erfinv", "lgamma", "digamma", "normalize", "cosine_similarity",
    "cdist", "dist", "layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm",
    "max_pool1d", "max_pool2d", "max_pool3d", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "nll_loss", "poisson_nll_loss", "gaussian_nll_loss", "cumprod", "logsigmoid", "softsign",
    "atan2", "hypot", "sinc", "logit", "xlogy", "square", "frac", "cross_entropy",
    "triplet_margin_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "mul", "matmul", "mm", "bmm", "mv", "dot", "vdot", "einsum", "outer", "ger", "inner", "kron",
    "tensordot", "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "baddbmm", "addmm", "addbmm", "addmv", "addr",
    "addcmul", "addcdiv", "div", "true_divide", "divide", "floor_divide", "amax", "amin", "max", "min",
    "maximum", "minimum", "fmax", "fmin", "lerp", "where",
}
# Binary products: each operand is saved when the other needs a gradient.
PRODUCTS = {"mul", "multiply", "matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "inner",
            "kron", "tensordot", "einsum", "linear", "bilinear", "conv1d", "conv2d", "conv3d",
            "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "addcmul", "cross"}
DIVISIONS = {"div", "true_divide", "divide"}
# Ops that only save indices/shape for backward (their inputs may change freely).
SAVE_NOTHING = {"max", "min", "amax", "amin", "maximum", "minimum", "where", "lerp", "fmax", "fmin",
                "floor_divide"}

# In-place methods that are not data changes.
NOT_INPLACE = {"requires_grad_", "share_memory_", "retain_grad", "detach_", "resize_", "record_stream",
               "pin_memory", "set_", "grad_", "register_hook"}

NUMPY_MODULES = {"numpy", "np", "scipy"}

# nn.init functions run under no_grad; they modify parameters legitimately.
INIT_PREFIX = "torch.nn.init."

# Grad-mode context managers and decorators.
NOGRAD_CTX = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
              "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"}
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

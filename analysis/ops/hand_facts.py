"""The torch facts the generated tables cannot give, typed by hand: each group says why it is not
generated and where it was checked (torch's signature, its source, its behaviour).

The engine reads them through torch_api.py, which joins them with the generated sets
(`_engine_sets.py`: the op table's derivations in facade.py, torch's Python classes read by
python_api.py). tests/test_torch_facts.py fails when an engine module spells a set of torch
names, and checks these groups against the table and against torch.

Adding a torch fact:
- one torch can tell (a YAML tag or signature, a derivative formula, a class of torch.nn or
  torch.optim): derive it in the generator (facade.py from the op table, python_api.py from
  torch's classes; surface.py and domains.py are the generator's own hand input), run
  `python -m gradaudit.analysis.ops.generate` and commit the regenerated files;
- one it cannot (a value range, a Python-level method, a module the engine models): add the name
  to its group here. Nothing else changes: a torch.nn module needs no entry in a value group when
  the functional its forward() runs is in it (torch_api adds it through MODULE_FUNCTIONS).
Only a new kind of fact, which engine code has yet to use, also gets its line in torch_api.py.

Nothing here imports anything: ops/ sits below the interpreter.
"""

from __future__ import annotations

# --- torch.nn modules ---------------------------------------------------------------------------
# The generator names every module's parameters and flag positions (MODULE_PARAMS, MODULE_FLAGS,
# MODULE_INPLACE); which modules the engine models is the engine's choice, written here.

# Modules modelled by their parameters and one functional call on their input; their parameter
# names depend on no constructor argument but the bias/affine flags (checked on torch 2.13's
# signatures). MultiheadAttention's are those of its default kdim == vdim == embed_dim.
PARAM_MODULES = (
    "Linear",
    "LazyLinear",
    "Bilinear",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "SyncBatchNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "GroupNorm",
    "LayerNorm",
    "RMSNorm",
    "Embedding",
    "EmbeddingBag",
    "PReLU",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "MultiheadAttention",
)

# Their parameter names depend on num_layers and bidirectional (torch_api.recurrent_params).
RECURRENT = ("RNN", "LSTM", "GRU")

# Calls that make or register a module's state, by their last name (interp/stateless.py: a class
# whose methods call one of them may hold parameters or buffers).
STATE_REGISTERS = (
    "Parameter",
    "ParameterList",
    "ParameterDict",
    "register_buffer",
    "register_parameter",
    "register_module",
    "add_module",
    "setattr",
    "requires_grad_",
    "Variable",
)
# Python builtins whose results are plain values, never modules (stateless.py).
PLAIN_BUILTINS = (
    "int",
    "float",
    "bool",
    "str",
    "len",
    "tuple",
    "list",
    "dict",
    "set",
    "range",
    "max",
    "min",
    "abs",
    "round",
    "sum",
)

# Parameter-free modules modelled as their functional (activations, dropout, pooling, padding,
# losses...); any other torch.nn module stays opaque (it may own parameters).
FREE_MODULES = (
    "ReLU",
    "ReLU6",
    "SiLU",
    "Mish",
    "SELU",
    "Hardswish",
    "Hardsigmoid",
    "LeakyReLU",
    "ELU",
    "CELU",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "Hardtanh",
    "Threshold",
    "RReLU",
    "GELU",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "Softmax2d",
    "LogSoftmax",
    "Softmin",
    "Softplus",
    "Softsign",
    "Tanhshrink",
    "LogSigmoid",
    "GLU",
    "Identity",
    "Flatten",
    "Unflatten",
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "ZeroPad2d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReplicationPad2d",
    "ChannelShuffle",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "Fold",
    "Unfold",
    "CosineSimilarity",
    "PairwiseDistance",
    "LocalResponseNorm",
    "L1Loss",
    "MSELoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "CTCLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "MultiLabelMarginLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    # the same functionals under other names or shapes (NLLLoss2d is NLLLoss, kept for old code)
    "NLLLoss2d",
    "Hardshrink",
    "Softshrink",
    "ZeroPad1d",
    "ZeroPad3d",
    "ConstantPad3d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "LPPool3d",
)

# Containers: they register what they are given (torch/nn/modules/container.py); the dict-like
# ones have keys(), values() and items().
CONTAINERS = ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
KEYED_CONTAINERS = ("ModuleDict", "ParameterDict")
# containers whose elements torch checks are modules (`... is not a Module subclass` otherwise)
MODULE_CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")
# containers whose iteration yields their parameters (a ParameterDict's yields its keys): given to
# an optimizer as they are (`Adam(self.vars)`, a learner's own `parameters()` returning its list)
PARAMETER_SEQUENCES = ("ParameterList",)

# What forward() saves where the op table does not decompose it: each recurrent gate and each
# attention projection multiplies the input by a weight, which keeps the input (RNNBase.forward,
# MultiheadAttention.forward run fused kernels the table cannot see into).
SAVES_INPUT_MODULES = ("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention")

# Constructor arguments that fix the output's last dimension (their signatures' leading
# arguments: Linear(in_features, out_features), Embedding(num_embeddings, embedding_dim)).
MODULE_DIM_ARGS = {
    "Linear": ("in_features", "out_features"),
    "Embedding": ("num_embeddings", "embedding_dim"),
    "Bilinear": ("in1_features", "in2_features", "out_features"),
}

# ReLU6 runs hardtanh(x, 0, 6): its forward() names hardtanh, whose range its arguments set.
RELU6_RANGE = ("ReLU6",)

# Wrappers that give back the module they wrap (`.module`): torch.nn.parallel's, torch.distributed
# FSDP's, the activation-checkpoint wrapper, SyncBatchNorm's converter and torch.compile, with the
# names they are usually imported as (DDP, FSDP).
WRAPPERS = (
    "DistributedDataParallel",
    "DataParallel",
    "FullyShardedDataParallel",
    "FSDP",
    "DDP",
    # FSDP2 (torch.distributed.fsdp.fully_shard): shards the module it is given in place and returns it
    "fully_shard",
    "compile",
    "checkpoint_wrapper",
    "convert_sync_batchnorm",
    # torch.nn.utils.weight_norm / spectral_norm (and their parametrizations): the module they are
    # given, its weight reparametrised (weight_g and weight_v, or weight_orig), returned
    "weight_norm",
    "spectral_norm",
)

# torch.nn.Parameter and its spellings (torch/nn/parameter.py).
PARAMETER_CLASSES = ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.UninitializedParameter")

# The pre-0.4 wrapper (torch/autograd/variable.py): `Variable(t, requires_grad=True)` is `t` made a
# leaf that requires grad; without the flag it is `t` itself.
VARIABLE_CLASSES = ("torch.autograd.Variable", "torch.autograd.variable.Variable")

# In-place methods that, applied to a `.grad` (`w.grad.zero_()`, `w.grad.detach_()` first), clear it
# by hand as zero_grad() does (torch/optim/optimizer.py's zero_grad runs these two).
GRAD_CLEARING = ("zero_", "detach_")

# In-place methods whose new value is their argument alone (`b.data.fill_(0.1)`, `b.data.zero_()`):
# with the generated random fills (`w.data.uniform_(-k, k)`) they start a parameter over, as
# nn.init's constant_ and zeros_ do. (The table cannot tell them from `floor_`: every one gives
# the receiver a zero gradient.)
VALUE_FILLS = ("fill_", "zero_")

# nn.init functions run under no_grad; they modify parameters legitimately.
INIT_PREFIX = "torch.nn.init."

# torch.nn.utils' gradient clipping (clip_grad.py; clip_grad_norm without `_` is deprecated).
CLIP_FUNCTIONS = ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grads_with_norm_")

# --- optimizers, schedulers, scalers (torch.optim's own classes are generated) -------------------

# torch.amp.GradScaler and torch.cuda.amp.GradScaler.
SCALERS = ("GradScaler",)

# Schedulers whose rate is the previous one times a factor (lr_scheduler.py's get_lr): rebuilt
# each step they go on from the current rate instead of restarting.
CHAINABLE_SCHEDULERS = ("ExponentialLR", "MultiplicativeLR")
# tensor methods that return the tensor itself when it already has the device, dtype or layout
# asked for (`p.to("cpu")` of a CPU parameter is `p`), a new tensor otherwise
MAY_RETURN_SELF = ("to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "contiguous")
# those that give back a fresh float32 CPU leaf itself on a CPU run (`.to(device)` with device the
# CPU, `.float()`): `.cuda()` always copies it, `.half()` and `.double()` change its dtype
SELF_FOR_A_CPU_LEAF = ("to", "cpu", "float", "contiguous")

# --- grad mode --------------------------------------------------------------------------------
# The context managers and decorators of torch.autograd.grad_mode and torch.amp, as imported.
NOGRAD_CTX = (
    "torch.no_grad",
    "torch.inference_mode",
    "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad",
    "torch.autograd.grad_mode.inference_mode",
)
GRAD_CTX = ("torch.enable_grad", "torch.autograd.enable_grad")
SET_GRAD_CTX = ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled")
AUTOCAST_CTX = ("torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast")
IS_GRAD_ENABLED = ("torch.is_grad_enabled",)
# the short names torch.* reaches them by (torch/__init__.py re-exports them)
GRAD_MODE_NAMES = ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled")

# torch.* functions of the process, not of tensors: no tensor result (torch.compile gives its
# module back).
PROCESS_FUNCTIONS = (
    "manual_seed",
    "set_printoptions",
    "set_num_threads",
    "save",
    "load",
    "compile",
    "set_default_dtype",
    "use_deterministic_algorithms",
    "set_float32_matmul_precision",
)

NUMPY_MODULES = ("numpy", "np", "scipy")

# --- tensor ops ---------------------------------------------------------------------------------

# Constructors written in Python or as legacy types, not ATen ops (torch/_tensor.py,
# torch/csrc/utils/tensor_new.cpp): fresh tensors whose values do not depend on their arguments'
# gradients.
PY_FACTORIES = (
    "tensor",
    "as_tensor",
    "from_numpy",
    "frombuffer",
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
    "new",  # the legacy `x.new(*sizes)` / `x.new(data)`: x gives only its dtype and device
)
# Factories that copy their data argument (tensor_new.cpp: a tensor given to them loses its graph).
REWRAP = (
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
)
# Constructors from Python data (`torch.tensor([1.0, 2.0])`: its shape and values are the list's).
DATA_FACTORIES = ("tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor")
# Factories that share their data argument's memory (the NumPy array, the buffer), or give a
# tensor argument back (as_tensor): they keep what it carries.
SHARING_FACTORIES = ("from_numpy", "as_tensor", "frombuffer")

# In-place methods that are not data changes: Python-level or autograd bookkeeping (the YAML types
# them `Tensor(a!)` like any in-place op, or they are not ATen ops at all).
NOT_INPLACE = (
    "requires_grad_",
    "share_memory_",
    "retain_grad",
    "detach_",
    "resize_",
    "record_stream",
    "pin_memory",
    "set_",
    "register_hook",
)

# Conversions that keep the values and shape and pass the gradient through, beside those that may
# return their input itself (MAY_RETURN_SELF): a pinned copy, the complex cast, a coalesced sparse
# tensor, a subclass view (as_subclass shares storage).
CONVERSIONS = ("pin_memory", "cfloat", "coalesce", "as_subclass")

# Methods that describe the tensor with Python numbers or bools (never gradient): several are
# Python-level (dim, nbytes, itemsize, __len__) and not in the YAML.
METADATA_METHODS = (
    "size",
    "dim",
    "numel",
    "nelement",
    "element_size",
    "stride",
    "is_contiguous",
    "data_ptr",
    "get_device",
    "ndimension",
    "storage_offset",
    "is_floating_point",
    "is_complex",
    "__len__",
    "nbytes",
    "itemsize",
    "equal",
)
# Methods that give Python values (Tensor.item, Tensor.tolist: autograd stops there).
TO_PYTHON = ("item", "tolist")

# In-place methods that, called on a `.grad`, give it a value computed elsewhere (`p.grad.add_(g)`:
# a hypergradient, a hand-made estimate), and the factories that only make an empty one to add into.
GRAD_FILLING = ("add_", "copy_")
ZERO_FACTORIES = ("zeros", "zeros_like", "new_zeros")

# Tensor methods that read the tensor without changing it or anything else (beside the metadata,
# Python-value and view methods): a call of one on a value the engine took for a module is no code
# that could change parameters.
TENSOR_READS = ("detach", "clone", "cpu")

# Methods of models from libraries (transformers, peft) that only read the model: report, count,
# save. A call of one is no code that could change the model's parameters, even where the engine
# cannot read the class (checked against transformers 5.24.0 and peft 0.21.2).
READ_ONLY_MODEL_METHODS = (
    "print_trainable_parameters",
    "get_nb_trainable_parameters",
    "num_parameters",
    "save_pretrained",
    "push_to_hub",
    "get_memory_footprint",
)

# Tensor properties that are views of it (python_variable.cpp's getters: transposes, the real and
# imaginary parts), and those that describe it (never gradient).
VIEW_ATTRIBUTES = ("T", "mT", "H", "mH", "real", "imag")
METADATA_ATTRIBUTES = ("shape", "dtype", "device", "ndim", "is_leaf", "grad_fn", "is_cuda", "layout", "names")

# Words of integer and bool dtype names (torch.long, torch.int64, torch.uint8, torch.bool): torch
# gives no gradient to such tensors.
INTEGRAL_DTYPE_WORDS = ("long", "int", "bool", "uint8")

# Shape-keeping ops the YAML does not tag `pointwise`: normalisations and softmaxes over a
# dimension, hardswish and log_sigmoid_forward whose entries lack the tag, detach (a view).
SAME_SHAPE = (
    "softmax",
    "log_softmax",
    "softmin",
    "normalize",
    "layer_norm",
    "group_norm",
    "batch_norm",
    "instance_norm",
    "rms_norm",
    "hardswish",
    "logsigmoid",
    "detach",
)
# Reductions native_functions.yaml does not tag `reduction` (median, nanmean, and dot / vdot,
# which take two 1-D tensors to a 0-dim one) or that are Python (Tensor.norm, torch.norm in
# torch/functional.py).
DOT_PRODUCTS = ("dot", "vdot")
UNTAGGED_REDUCTIONS = ("median", "nanmean", "norm", *DOT_PRODUCTS)

# Ops that take their new sizes as arguments (`view(2, -1)`: a -1 is solved from the total).
RESHAPES = ("view", "reshape")
# Matrix products: (..., n, m) @ (..., m, p) -> (..., n, p).
MATRIX_PRODUCTS = ("matmul", "mm", "bmm")

# F functions whose result the engine gives their inputs' flow without an op (so no save is
# recorded): dropout masks, padding and resampling, embedding lookups, one_hot (integer in).
F_PLAIN_FLOW = (
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "pad",
    "interpolate",
    "upsample",
    "embedding",
    "one_hot",
    "grid_sample",
    "pixel_shuffle",
    "unfold",
    "fold",
)

# Methods that show a value the engine did not see being made is a tensor: names lists, dicts and
# modules do not have (besides the views, metadata and saving ops of the tables).
TENSOR_ONLY_METHODS = (
    "clone",
    "sum",
    "mean",
    "numpy",
    "item",
    "tolist",
    "detach",
    "abs",
    "flatten",
    "softmax",
    "log_softmax",
    "square",
    "neg",
)

# A loss's `reduction` values that give a scalar (torch/nn/_reduction.py; kl_div's batchmean).
REDUCING_MODES = ("mean", "sum", "batchmean")

# What target each loss takes (its documentation's shapes): class indices (the result drops the
# class dimension with reduction='none'), binary labels, or values like the input.
LOSS_TARGETS = {
    "cross_entropy": "class",
    "nll_loss": "class",
    "binary_cross_entropy": "binary",
    "binary_cross_entropy_with_logits": "binary",
    "mse_loss": "regression",
    "l1_loss": "regression",
    "smooth_l1_loss": "regression",
    "huber_loss": "regression",
}

# The fields of the (values, indices) results (torch.return_types: sort, topk, max(dim)...).
VALUES_INDICES_FIELDS = ("values", "indices")

# torch.nn.utils.rnn: a PackedSequence is a named tuple whose `data` field is the packed tensor
# itself, with its graph (not `Tensor.data`, a cut); its other fields are index tensors. The
# packing calls make one from their first argument, pad_packed_sequence gives back (padded, lengths)
# and a recurrent module given one returns one.
PACKING_CALLS = (
    "torch.nn.utils.rnn.pack_padded_sequence",
    "torch.nn.utils.rnn.pack_sequence",
    "torch.nn.utils.rnn.PackedSequence",
)
UNPACKING_CALLS = ("torch.nn.utils.rnn.pad_packed_sequence",)
PACKED_FIELDS = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")

# nn.Module attributes that are not methods (Module.__init__ sets them).
MODULE_ATTRIBUTES = ("training",)

# --- value ranges (the numerical rules GA401-GA408) -------------------------------------------
# What a result's values can be, which torch's autograd tables do not hold: each checked against
# the op's definition (softmax is in [0, 1], relu >= 0). Module names come with their functional.

# probabilities: exactly 0 (or 1) once exp underflows in float32
PROBABILITIES = ("softmax", "_softmax", "softmin")
SIGMOIDS = ("sigmoid", "expit", "hardsigmoid")
# the float64 dtype as code names it, and the calls that make it the default for new float tensors
FLOAT64_NAMES = ("torch.float64", "torch.double", "torch.DoubleTensor", "torch.cuda.DoubleTensor", "float64", "double")
NARROW_FLOAT_NAMES = ("torch.float32", "torch.float", "torch.float16", "torch.half", "torch.bfloat16", "float32")
SET_DEFAULT_DTYPE = ("torch.set_default_dtype", "torch.set_default_tensor_type")
# process launchers that run `fn(rank, *args)` in each worker (a DDP script's main_worker)
SPAWN = ("torch.multiprocessing.spawn", "torch.multiprocessing.start_processes", "torch.multiprocessing.spawn.spawn")
# process and thread classes that run `target(*args, **kwargs)` once started (torch.multiprocessing
# re-exports the standard library's)
PROCESS = (
    "torch.multiprocessing.Process",
    "multiprocessing.Process",
    "multiprocessing.context.Process",
    "threading.Thread",
)
# conversions to float64, to a narrower float, and the ones told the dtype by an argument
TO_FLOAT64 = ("double",)
TO_NARROW_FLOAT = ("float", "half", "bfloat16")
TO_DTYPE_ARG = ("to", "type")
# >= 0 and exactly 0 for some inputs (rectifiers, counts, samples, one-hot rows)
NONNEG_ZERO = ("relu", "relu6", *RELU6_RANGE, "count_nonzero", "poisson", "one_hot", "bincount")
# rows picked by the data (the indices of nonzero entries, the entries a mask keeps): there may be
# none, so their number (`len(torch.nonzero(x))`, `.shape[0]`) is a count that can be 0
SELECTIONS = ("nonzero", "argwhere", "masked_select")
# how many elements or rows: of a selection, a count that can be 0
SIZES = ("size", "numel", "nelement", "__len__")
# 0 where their input is not positive, and their backward selects 0 there (threshold_backward,
# hardtanh_backward), whatever gradient arrives: a NaN is not passed on
ZERO_MASKING = ("relu", "relu6", *RELU6_RANGE)
# pooling: each output is one input element (max) or their mean (avg): all 0 where the inputs are
POOLS = (
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
)
# histograms whose range defaults to the data's own min..max (min == max == 0): every element falls
# in a bin, so the counts sum to the number of elements (a bin can still be 0)
DATA_RANGE_COUNTS = ("histc",)
# magnitudes and spreads: >= 0, 0 where the input is (or its entries are equal)
MAGNITUDES = ("abs", "square", "norm", "std", "var", "vector_norm", "matrix_norm", "cdist", "pdist")
# norms: > 0 for a tensor that is not all zeros
NORMS = ("norm", "vector_norm", "matrix_norm")
# 0 only for a zero (norms) or constant (std, var) tensor: never for a biased layer's output
SPREADS = (*NORMS, "std", "var")
# > 0 wherever their input is not 0: |x|, x * x
POSITIVE_IF_NONZERO = ("abs", "square")
# always > 0 (a log, a division or a sqrt of them is safe); elu_plus_one is a common helper name
POSITIVE_OPS = ("exp", "exp2", "softplus", "cosh", "elu_plus_one")
# the inverse of the natural log: of a log-probability (`exp(log_softmax(x))`, `log_prob(a).exp()`),
# a probability again, which underflows to exactly 0 in float32 as a softmax does
EXPONENTIALS = ("exp",)
# log-probabilities over classes or actions (a policy's log pi): a policy-gradient term weights
# one picked at the drawn action (GA304, a critic's value in that weight)
LOG_PROBABILITIES = ("log_softmax",)
# losses that regress a value onto a target (a critic's value loss)
REGRESSION_LOSSES = ("mse_loss", "smooth_l1_loss", "huber_loss", "l1_loss")
# outputs within [-1, 1] whatever the input (torch docs): a sigmoid of one never saturates in float32
UNIT_RANGE = ("cosine_similarity", "tanh", "sin", "cos", "hardtanh", "softsign")
# no longer raw activations: bounded, normalised or in log space
BOUNDED = (
    "tanh",
    "log_softmax",
    "logsigmoid",
    "logsumexp",
    "layer_norm",
    "normalize",
    "batch_norm",
    "group_norm",
    "rms_norm",
    "sin",
    "cos",
    "clamp",
    "clip",
)
# lookup tables whose rows are random and dense unless a padding row is asked for (padding_idx,
# the third argument): none of their outputs is the zero vector (Mark.DENSE)
UNPADDED_EMBEDDINGS = ("Embedding",)
# linear maps whose functional form takes the bias as its third operand (`F.linear(x, w, b)`)
BIAS_OPERAND = ("linear", "conv1d", "conv2d", "conv3d", "bilinear", "addmm")
# linear maps of their input: raw activations stay raw
LINEAR = (
    "linear",
    "matmul",
    "mm",
    "bmm",
    "einsum",
    "conv1d",
    "conv2d",
    "conv3d",
    "embedding",
    "bilinear",
    "addmm",
)
# the values pass through unchanged (shape, dtype, device, selection; `getitem` is indexing)
KEEP = (
    "view",
    "reshape",
    "resize",  # the deprecated out-of-place Tensor.resize(*sizes): a reshape of the same values
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
)
# The catalog's families (GA401 logs, GA403 roots) by name: the op table's domain facts say where
# each stops being finite (-inf at 0; an infinite gradient at 0), but they do not tell a log from
# rsqrt or reciprocal, which share those facts (tests/test_ops_table.py checks them).
LOGS = ("log", "log2", "log10")
ROOTS = ("sqrt", "rsqrt")
# a causal mask keeps one unmasked key per row
MASK_BUILDERS = ("triu", "tril")
# sums and means keep their input's zeros, raw scale and exp results
SUMS = ("sum", "mean", "nansum", "nanmean", "cumsum")
# products along a dimension: 0 where any factor is (a product of norms: two coincident points)
AXIS_PRODUCTS = ("prod", "cumprod")
# order statistics: one of the input's own values
ORDER_STATISTICS = ("amax", "amin", "max", "min", "median", "mode", "kthvalue")
# >= every element of their input: s - s.max() is <= 0
UPPER_BOUNDS = ("max", "amax", "logsumexp")
# results at least their first argument (a maximum stays an upper bound through them: `clamp(m,
# min=0)`, `m.detach()`); a clamp or clip given a `max` is not one
AT_LEAST_FIRST = ("clamp", "clamp_min", "clip", "relu", "detach", "maximum")
UPPER_CLAMPS = ("clamp", "clip")
# in place, a projection of a tensor onto a range (`log_std.clamp_(lo, hi)` after each update): it
# changes values only where they left the range, and learns nothing, so a parameter only projected
# is not an updated one (GA108, GA204)
PROJECTIONS = ("clamp", "clip", "clamp_min", "clamp_max")
# softmaxes: a row masked with -inf everywhere gives NaN
SOFTMAXES = ("softmax", "_softmax", "log_softmax")
# NaN dropped after the fact (GA405): ops whose backward reads their input or output only to select
# (a comparison or a sign: `NaN > 0` is False), so a NaN there gets gradient 0 when the gradient
# from above is 0 (checked with torch 2.13: relu, leaky_relu, elu, clamp, maximum, hardtanh, abs,
# l1_loss). Every other op that derivatives.yaml says saves its input or output multiplies by it:
# a NaN there makes the gradient NaN even where the gradient from above is 0 (square, exp, tanh,
# softplus, gelu, huber_loss, sqrt; products and divisions)
NAN_SELECTING = (
    "abs",
    "relu",
    "relu6",
    "leaky_relu",
    "elu",
    "hardtanh",
    "threshold",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "max",
    "min",
    "sign",
    "sgn",
    "l1_loss",
    "where",
    "masked_fill",
)
# the operators (ARITH_OPS' names) a NaN passes through with a constant derivative (a sum, a
# difference), those that scale by a number, and those whose backward reads an operand (a product,
# a quotient, a power)
NAN_PASSING_ARITH = ("add", "sub")
SCALING_ARITH = ("mul", "div")
NAN_READING_ARITH = ("mul", "div", "pow")
# selections by a mask (a NaN test's mask drops the NaN entries)
MASK_SELECTIONS = ("masked_select", "masked_fill")
# reductions and conversions that drop or replace NaN entries: the forward is finite, the gradient
# they give those entries is 0
NAN_DROPPING = ("nanmean", "nansum", "nan_to_num")
# masks true where a value is NaN (or, negated, where it is not): what code writes for missing data
# (a test of finiteness is more often a guard against an overflow it does not expect)
NAN_TESTS = ("isnan",)
# take a lower bound (`min`): > 0 when it is
LOWER_CLAMPS = ("clamp", "clip", "clamp_min")
CLAMPS = ("clamp", "clip", "clamp_min", "clamp_max")
# sums into rows chosen by an index: (self, dim, index, src)
SCATTER_SUMS = ("scatter_add", "index_add")
# elementwise maximum with their second input
ELEMENT_MAXIMA = ("maximum", "fmax")
# what makes a torch.where branch's operand guarded (GA405): a clamp, a maximum, a magnitude
WHERE_GUARDS = ("clamp", "clamp_min", "clip", "maximum", "abs")
# 0 exactly where their input is 0: the operand is still "the very value" a condition compared
SAME_ZEROS = (
    "abs",
    "neg",
    "float",
    "double",
    "half",
    "bfloat16",
    "to",
    "type_as",
    "clone",
    "contiguous",
    "squeeze",
    "unsqueeze",
    "view",
    "reshape",
    "flatten",
    "expand",
    "expand_as",
)
# factories whose values are all 1
ONES_FACTORIES = ("ones", "ones_like", "new_ones")
# joins of tensors along an existing dim (given as the second argument or `dim=`): each part keeps
# its rows' positions along the other dims
CONCATENATIONS = ("cat", "concat", "concatenate")

# --- Python's and NumPy's names for torch ops (GA103, GA105 fixes) ------------------------------
# math functions whose torch namesake computes the same values on tensors (math.fabs is torch.abs)
MATH_TO_TORCH = {
    "exp": "exp",
    "log": "log",
    "sqrt": "sqrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "tanh": "tanh",
    "log1p": "log1p",
    "expm1": "expm1",
    "atan": "atan",
    "fabs": "abs",
}
# NumPy functions whose torch namesake computes the same elementwise values on tensors (and keeps
# the graph). Reductions are left out (`axis`/`keepdims` vs `dim`/`keepdim`, NumPy's float64
# accumulation).
NUMPY_TO_TORCH = {
    "abs": "abs",
    "absolute": "abs",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log1p": "log1p",
    "log2": "log2",
    "log10": "log10",
    "sqrt": "sqrt",
    "square": "square",
    "tanh": "tanh",
    "sinh": "sinh",
    "cosh": "cosh",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "negative": "neg",
    "reciprocal": "reciprocal",
    "sign": "sign",
    "floor": "floor",
    "ceil": "ceil",
    "clip": "clamp",
    "where": "where",
    "maximum": "maximum",
    "minimum": "minimum",
    "power": "pow",
}
# the methods a tensor goes through on its way to NumPy (t.detach().cpu().numpy())
NUMPY_HOPS = ("detach", "cpu", "numpy")
# what brings an array back into torch
FROM_NUMPY = ("from_numpy", "tensor", "as_tensor", "Tensor", "FloatTensor")
# in-place methods that sum their argument into the tensor (`running.add_(loss)`: as `running += loss`),
# or copy it in (`buf.copy_(v)`: the copy keeps the graph of the version it overwrote)
ACCUMULATING_METHODS = ("add_", "sub_", "copy_")

"""Hand-written knowledge the YAML files do not have: what Python-level torch code calls.

`generate.py` reads this; the engine never imports it. Everything here is checked against the
installed torch when the table is generated: each ATen op and parameter named must exist, each
F.* name must be a function of torch.nn.functional, each module a class of torch.nn.

A decomposition is written as steps, `op[.overload](param=source, ...)` separated by ` ; `:
`param` is a tensor parameter of the ATen op, `source` a parameter of the function being
described or `@k`, the first output of step k. Only tensor parameters are bound: the others do
not decide gradients or what is saved. The last step's outputs are the result.
"""

from __future__ import annotations

# --- ATen ops without a derivative formula of their own (CompositeImplicitAutograd) ---------
# Autograd records the ops their C++ bodies call; these say which (aten/src/ATen/native/*.cpp).
# A composite overload not listed here and not forwarding to a sibling overload with a formula
# stays `composite` with unknown saves, so GA110 is quiet about it rather than guess.
ATEN_DECOMPOSITIONS = {
    # SoftMax.cpp: softmax(input, dim, dtype) -> _softmax (after an optional cast)
    "softmax.int": "_softmax(self=self)",
    "log_softmax.int": "_log_softmax(self=self)",
    # Linear.cpp: 2-D input with bias -> addmm(bias, input, weight.t()); else matmul(input, weight.t()) + bias.
    # Both save input and (a view of) weight the same way.
    "linear": "t(self=weight) ; addmm(self=bias, mat1=input, mat2=@0)",
    # LinearAlgebra.cpp: matmul dispatches on dims to dot / mv / mm / bmm; each saves both operands.
    "matmul": "mm(self=self, mat2=other)",
    # Linear.cpp: bilinear -> _trilinear(input1, weight, input2)
    "bilinear": "_trilinear(i1=input1, i2=weight, i3=input2)",
    # LinearAlgebra.cpp: outer(self, vec2) = self.reshape({-1, 1}) * vec2; ger is outer.
    "outer": "view(self=self) ; mul.Tensor(self=@0, other=vec2)",
    # Convolution.cpp: conv*d / conv_transpose*d -> convolution
    "conv1d": "convolution(input=input, weight=weight, bias=bias)",
    "conv2d": "convolution(input=input, weight=weight, bias=bias)",
    "conv3d": "convolution(input=input, weight=weight, bias=bias)",
    "conv_transpose1d": "convolution(input=input, weight=weight, bias=bias)",
    "conv_transpose2d.input": "convolution(input=input, weight=weight, bias=bias)",
    "conv_transpose3d.input": "convolution(input=input, weight=weight, bias=bias)",
    # padding='same' / 'valid': _convolution_mode pads and calls convolution
    "conv1d.padding": "convolution(input=input, weight=weight, bias=bias)",
    "conv2d.padding": "convolution(input=input, weight=weight, bias=bias)",
    "conv3d.padding": "convolution(input=input, weight=weight, bias=bias)",
    # layer_norm.cpp / group_norm.cpp / Normalization.cpp
    "layer_norm": "native_layer_norm(input=input, weight=weight, bias=bias)",
    "group_norm": "native_group_norm(input=input, weight=weight, bias=bias)",
    "batch_norm": "native_batch_norm(input=input, weight=weight, bias=bias, running_mean=running_mean, "
    "running_var=running_var)",
    # instance_norm reshapes the input (a view) and runs batch_norm with the weight repeated
    "instance_norm": "view(self=input) ; native_batch_norm(input=@0)",
    # layer_norm.cpp: rms_norm -> _fused_rms_norm, whose composite kernel (rms_norm_composite) is
    # input * rsqrt(input.pow(2).mean(dims, keepdim) + eps), times weight
    "rms_norm": "_fused_rms_norm(input=input, weight=weight)",
    "_fused_rms_norm": "pow.Tensor_Scalar(self=input) ; mean.dim(self=@0) ; add.Scalar(self=@1) ; rsqrt(self=@2) ; "
    "mul.Tensor(self=input, other=@3) ; mul.Tensor(self=@4, other=weight)",
    # Activation.cpp: prelu -> _prelu_kernel
    "prelu": "_prelu_kernel(self=self, weight=weight)",
    # Pooling.cpp: max_pool*d records max_pool*d_with_indices when the input requires grad
    "max_pool1d": "max_pool1d_with_indices(self=self)",
    "max_pool1d_with_indices": "unsqueeze(self=self) ; max_pool2d_with_indices(self=@0)",
    "max_pool2d": "max_pool2d_with_indices(self=self)",
    "max_pool3d": "max_pool3d_with_indices(self=self)",
    # TensorShape.cpp: movedim permutes; narrow slices; hsplit/vsplit/dsplit are tensor_split
    "movedim.intlist": "permute(self=self)",
    "movedim.int": "permute(self=self)",
    "narrow": "slice.Tensor(self=self)",
    "narrow.Tensor": "slice.Tensor(self=self)",
    # Dropout.cpp: dropout on CPU is input * mask (_dropout_impl); on CUDA the fused
    # native_dropout. Either saves only the mask.
    "dropout": "mul.Tensor(self=input)",
    "feature_dropout": "mul.Tensor(self=input)",
    "alpha_dropout": "mul.Tensor(self=input)",
    "feature_alpha_dropout": "mul.Tensor(self=input)",
    # Activation.cpp
    "relu6": "hardtanh(self=self)",
    "selu": "elu(self=self)",
    "rrelu": "rrelu_with_noise(self=self)",
    "log_sigmoid": "log_sigmoid_forward(self=self)",
    # LossNLL.cpp: cross_entropy_loss (class-index targets) = nll_loss_nd(log_softmax(self, 1), ...)
    "cross_entropy_loss": "_log_softmax(self=self) ; nll_loss_forward(self=@0, target=target, weight=weight)",
    "nll_loss_nd": "nll_loss_forward(self=self, target=target, weight=weight)",
    "nll_loss": "nll_loss_forward(self=self, target=target, weight=weight)",
    # Loss.cpp
    "kl_div": "xlogy.Tensor(self=target, other=target) ; mul.Tensor(self=target, other=self) ; "
    "sub.Tensor(self=@0, other=@1)",
    "l1_loss": "sub.Tensor(self=self, other=target) ; abs(self=@0) ; mean(self=@1)",
    "margin_ranking_loss": "sub.Tensor(self=input1, other=input2) ; neg(self=target) ; "
    "mul.Tensor(self=@1, other=@0) ; clamp_min(self=@2)",
    "poisson_nll_loss": "exp(self=input) ; mul.Tensor(self=target, other=input) ; sub.Tensor(self=@0, other=@1) ; "
    "mean(self=@2)",
    # Distance.cpp: pairwise_distance = norm(x1 - x2 + eps)
    "pairwise_distance": "sub.Tensor(self=x1, other=x2) ; add.Scalar(self=@0) ; linalg_vector_norm(self=@1)",
    "cdist": "_cdist_forward(x1=x1, x2=x2)",
    # UnaryOps.cpp: square = pow(self, 2)
    "square": "pow.Tensor_Scalar(self=self)",
    "square_": "pow_.Scalar(self=self)",
    # LinearAlgebra.cpp: cross -> linalg_cross
    "cross": "linalg_cross(self=self, other=other)",
    # TensorShape.cpp: reshape is a view when the strides allow (else clone + view); flatten and
    # the *_as forms go through reshape / view / expand
    "reshape": "view(self=self)",
    "reshape_as": "view(self=self)",
    "flatten.using_ints": "view(self=self)",
    "view_as": "view(self=self)",
    "expand_as": "expand(self=self)",
    "unflatten.int": "view(self=self)",
    # TensorConversions.cpp: to(...) returns self when nothing changes, else _to_copy
    "to.dtype": "_to_copy(self=self)",
    "to.device": "_to_copy(self=self)",
    "to.dtype_layout": "_to_copy(self=self)",
    "to.other": "_to_copy(self=self)",
    "type_as": "_to_copy(self=self)",
    # TensorProperties.cpp: contiguous returns self when already contiguous, else clone
    "contiguous": "clone(self=self)",
    # TensorCompare.cpp: isclose compares (eq / abs / le): a bool result
    "isclose": "eq.Tensor(self=self, other=other)",
    "isfinite": "eq.Tensor(self=self, other=self)",
    "isreal": "eq.Tensor(self=self, other=self)",
    # TensorAdvancedIndexing.cpp: argwhere = nonzero
    "argwhere": "nonzero(self=self)",
    # TensorShape.cpp: chunk -> split (views)
    "chunk": "split.Tensor(self=self)",
    "embedding_bag.padding_idx": "_embedding_bag(weight=weight, indices=indices, offsets=offsets, "
    "per_sample_weights=per_sample_weights)",
    # BatchLinearAlgebra.cpp: linalg_det -> _linalg_det (which saves A, the LU and the pivots)
    "linalg_det": "_linalg_det(A=A)",
    # TensorCompare.cpp: where with a number wraps it in a tensor and runs where.self;
    # where(condition) alone is nonzero(condition, as_tuple=True)
    "where.ScalarSelf": "where.self(condition=condition, other=other)",
    "where.ScalarOther": "where.self(condition=condition, self=self)",
    "where.Scalar": "where.self(condition=condition)",
    "where": "nonzero(self=condition)",
    "max.other": "maximum(self=self, other=other)",
    "min.other": "minimum(self=self, other=other)",
}

# ATen ops that are another op under a second name (native_functions.yaml says so in a comment:
# "# divide, alias for div"; torch.special's documentation for special_*): each overload runs the
# target's overload of the same name, else the one with the same tensor parameters.
ALIASES = {
    "absolute": "abs",
    "absolute_": "abs_",
    "arccos": "acos",
    "arccos_": "acos_",
    "arccosh": "acosh",
    "arccosh_": "acosh_",
    "arcsin": "asin",
    "arcsin_": "asin_",
    "arcsinh": "asinh",
    "arcsinh_": "asinh_",
    "arctan": "atan",
    "arctan_": "atan_",
    "arctanh": "atanh",
    "arctanh_": "atanh_",
    "arctan2": "atan2",
    "arctan2_": "atan2_",
    "clip": "clamp",
    "clip_": "clamp_",
    "divide": "div",
    "divide_": "div_",
    "true_divide": "div",
    "true_divide_": "div_",
    "multiply": "mul",
    "multiply_": "mul_",
    "subtract": "sub",
    "subtract_": "sub_",
    "negative": "neg",
    "negative_": "neg_",
    "fix": "trunc",
    "fix_": "trunc_",
    "moveaxis": "movedim",
    "swapaxes": "transpose",
    "swapdims": "transpose",
    "greater": "gt",
    "greater_": "gt_",
    "greater_equal": "ge",
    "greater_equal_": "ge_",
    "less": "lt",
    "less_": "lt_",
    "less_equal": "le",
    "less_equal_": "le_",
    "not_equal": "ne",
    "not_equal_": "ne_",
    "row_stack": "vstack",
    "concat": "cat",
    "concatenate": "cat",
    "ger": "outer",
    "det": "linalg_det",
    "matrix_power": "linalg_matrix_power",
    "orgqr": "linalg_householder_product",
    "linalg_matmul": "matmul",
    "hsplit": "tensor_split",
    "vsplit": "tensor_split",
    "dsplit": "tensor_split",
    "special_expit": "sigmoid",
    "special_exp2": "exp2",
    "special_expm1": "expm1",
    "special_logit": "logit",
    "special_xlogy": "xlogy",
    "special_round": "round",
    "special_log_softmax": "log_softmax",
    "special_softmax": "softmax",
    "special_erf": "erf",
    "special_erfc": "erfc",
    "special_erfinv": "erfinv",
    "special_i0": "i0",
    "special_psi": "digamma",
    "special_digamma": "digamma",
    "special_gammaln": "lgamma",
    "special_polygamma": "polygamma",
    "special_log1p": "log1p",
    "special_sinc": "sinc",
    "special_logsumexp": "logsumexp",
    "special_multigammaln": "mvlgamma",
}

# Ops torch binds to Python by hand (gen_python_functions._SKIP_PYTHON_BINDINGS: "These functions
# require manual Python bindings"; python_variable_methods.cpp and python_torch_functions_manual.cpp
# define them): callable although torchgen generates no binding.
MANUALLY_BOUND = {
    "contiguous",
    "to",
    "copy_",
    "nonzero",
    "requires_grad_",
    "set_",
    "item",
    "numpy_T",
    "mT",
    "mH",
    "matrix_H",
}

# gen_variable_type.DONT_REQUIRE_DERIVATIVE, the group commented "These only depend on the input
# Tensor's shape and device, not the data" (plus randint_like, which is the same but absent there):
# fresh tensors shaped like their input, in its dtype.
SHAPE_ONLY = {
    "empty_like",
    "ones_like",
    "full_like",
    "zeros_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "new_empty",
    "new_empty_strided",
    "new_full",
    "new_zeros",
    "new_ones",
}

# Formulas that are zero for real inputs although they are not written `zeros_like`:
ZERO_FOR_REAL = {
    "sgn": "sgn_backward keeps only the change of phase, which a real number does not have",
}

# --- torch.nn.functional functions written in Python ---------------------------------------
# (builtins of F, aliases of torch.* or torch._C._nn.*, are mapped to their ATen op without an
# entry here). Each: what the Python body calls on the default path (torch/nn/functional.py).
# A Python F function not listed here is unknown to the table: `op_for` returns None.
FUNCTIONAL = {
    "adaptive_avg_pool2d": "adaptive_avg_pool2d(self=input)",
    "adaptive_avg_pool3d": "adaptive_avg_pool3d(self=input)",
    "adaptive_max_pool1d": "adaptive_max_pool1d(self=input)",
    "adaptive_max_pool2d": "adaptive_max_pool2d(self=input)",
    "adaptive_max_pool3d": "adaptive_max_pool3d(self=input)",
    # the *_with_indices forms call the same op and return its indices too
    "adaptive_max_pool1d_with_indices": "adaptive_max_pool1d(self=input)",
    "adaptive_max_pool2d_with_indices": "adaptive_max_pool2d(self=input)",
    "adaptive_max_pool3d_with_indices": "adaptive_max_pool3d(self=input)",
    "affine_grid": "affine_grid_generator(theta=theta)",
    "alpha_dropout": "alpha_dropout(input=input)",
    "batch_norm": "batch_norm(input=input, weight=weight, bias=bias, running_mean=running_mean, "
    "running_var=running_var)",
    "binary_cross_entropy": "binary_cross_entropy(self=input, target=target, weight=weight)",
    "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits(self=input, target=target, "
    "weight=weight, pos_weight=pos_weight)",
    "celu": "celu(self=input)",
    "cosine_embedding_loss": "cosine_embedding_loss(input1=input1, input2=input2, target=target)",
    "cross_entropy": "cross_entropy_loss(self=input, target=target, weight=weight)",
    "ctc_loss": "ctc_loss.Tensor(log_probs=log_probs, targets=targets, input_lengths=input_lengths, "
    "target_lengths=target_lengths)",
    "dropout": "dropout(input=input)",
    # dropout1d/2d/3d -> _VF.feature_dropout
    "dropout1d": "feature_dropout(input=input)",
    "dropout2d": "feature_dropout(input=input)",
    "dropout3d": "feature_dropout(input=input)",
    "elu": "elu(self=input)",
    # F.embedding(input, weight) calls torch.embedding(weight, input): the arguments swap
    "embedding": "embedding(weight=weight, indices=input)",
    "embedding_bag": "embedding_bag.padding_idx(weight=weight, indices=input, offsets=offsets, "
    "per_sample_weights=per_sample_weights)",
    "feature_alpha_dropout": "feature_alpha_dropout(input=input)",
    "fold": "col2im(self=input)",
    "fractional_max_pool2d": "fractional_max_pool2d(self=input)",
    "fractional_max_pool3d": "fractional_max_pool3d(self=input)",
    "fractional_max_pool2d_with_indices": "fractional_max_pool2d(self=input)",
    "fractional_max_pool3d_with_indices": "fractional_max_pool3d(self=input)",
    # var is cloned and clamped to eps under no_grad, then 0.5 * (log(var) + (input - target)**2 / var)
    "gaussian_nll_loss": "clone(self=var) ; log(self=@0) ; sub.Tensor(self=input, other=target) ; "
    "pow.Tensor_Scalar(self=@2) ; div.Tensor(self=@3, other=@0) ; add.Tensor(self=@1, other=@4)",
    "glu": "glu(self=input)",
    "grid_sample": "grid_sampler(input=input, grid=grid)",
    "group_norm": "group_norm(input=input, weight=weight, bias=bias)",
    # (logits + gumbel noise) / tau, softmax; hard=True adds y_hard - y_soft.detach() (straight through)
    "gumbel_softmax": "add.Tensor(self=logits) ; _softmax(self=@0)",
    "hardsigmoid": "hardsigmoid(self=input)",
    "hardswish": "hardswish(self=input)",
    "hardtanh": "hardtanh(self=input)",
    "hinge_embedding_loss": "hinge_embedding_loss(self=input, target=target)",
    "huber_loss": "huber_loss(self=input, target=target)",
    "instance_norm": "instance_norm(input=input, weight=weight, bias=bias, running_mean=running_mean, "
    "running_var=running_var)",
    # every mode upsamples with an op that saves no tensor (only sizes and scales)
    "interpolate": "upsample_nearest2d.vec(input=input)",
    "kl_div": "kl_div(self=input, target=target)",
    "l1_loss": "l1_loss(self=input, target=target)",
    "layer_norm": "layer_norm(input=input, weight=weight, bias=bias)",
    "leaky_relu": "leaky_relu(self=input)",
    "log_softmax": "log_softmax.int(self=input)",
    "margin_ranking_loss": "margin_ranking_loss(input1=input1, input2=input2, target=target)",
    # max_pool*d without indices: torch.max_pool*d, which records max_pool*d_with_indices
    "max_pool1d": "max_pool1d(self=input)",
    "max_pool2d": "max_pool2d_with_indices(self=input)",
    "max_pool3d": "max_pool3d_with_indices(self=input)",
    "max_pool1d_with_indices": "max_pool1d_with_indices(self=input)",
    "max_pool2d_with_indices": "max_pool2d_with_indices(self=input)",
    "max_pool3d_with_indices": "max_pool3d_with_indices(self=input)",
    # max_unpool1d unsqueezes input and indices and runs max_unpool2d
    "max_unpool1d": "unsqueeze(self=input) ; unsqueeze(self=indices) ; max_unpool2d(self=@0, indices=@1)",
    "max_unpool2d": "max_unpool2d(self=input, indices=indices)",
    "max_unpool3d": "max_unpool3d(self=input, indices=indices)",
    "mish": "mish(self=input)",
    "mse_loss": "mse_loss(self=input, target=target)",
    "multi_margin_loss": "multi_margin_loss(self=input, target=target, weight=weight)",
    "multilabel_margin_loss": "multilabel_margin_loss_forward(self=input, target=target)",
    # -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input)), then the reduction
    "multilabel_soft_margin_loss": "log_sigmoid_forward(self=input) ; neg(self=input) ; log_sigmoid_forward(self=@1) ; "
    "mul.Tensor(self=target, other=@0) ; rsub.Scalar(self=target) ; "
    "mul.Tensor(self=@4, other=@2) ; add.Tensor(self=@3, other=@5)",
    "nll_loss": "nll_loss_nd(self=input, target=target, weight=weight)",
    # input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    "normalize": "linalg_vector_norm(self=input) ; clamp_min(self=@0) ; expand_as(self=@1) ; "
    "div.Tensor(self=input, other=@2)",
    "pad": "pad(self=input)",
    "poisson_nll_loss": "poisson_nll_loss(input=input, target=target)",
    "relu": "relu(self=input)",
    "relu6": "relu6(self=input)",
    "rms_norm": "rms_norm(input=input, weight=weight)",
    "rrelu": "rrelu(self=input)",
    "selu": "selu(self=input)",
    "sigmoid": "sigmoid(self=input)",
    "silu": "silu(self=input)",
    "smooth_l1_loss": "smooth_l1_loss(self=input, target=target)",
    "soft_margin_loss": "soft_margin_loss(self=input, target=target)",
    "softmax": "softmax.int(self=input)",
    "softmin": "neg(self=input) ; softmax.int(self=@0)",
    "softsign": "abs(self=input) ; add.Scalar(self=@0) ; div.Tensor(self=input, other=@1)",
    "tanh": "tanh(self=input)",
    "tanhshrink": "tanh(self=input) ; sub.Tensor(self=input, other=@0)",
    "threshold": "threshold(self=input)",
    "triplet_margin_loss": "triplet_margin_loss(anchor=anchor, positive=positive, negative=negative)",
    "unfold": "im2col(self=input)",
    "upsample": "upsample_nearest2d.vec(input=input)",
    "upsample_nearest": "upsample_nearest2d.vec(input=input)",
    "upsample_bilinear": "upsample_bilinear2d.vec(input=input)",
}

# --- torch.* and Tensor methods written in Python (torch/functional.py, torch/_tensor.py) ----
TORCH_PYTHON = {
    # torch.norm: p='fro' or a number -> torch.linalg.vector_norm (p='nuc' -> a matrix norm)
    "norm": "linalg_vector_norm(self=input)",
    # torch.split: an int -> split.Tensor, a list of sizes -> split_with_sizes; views either way
    "split": "split.Tensor(self=tensor)",
    "unique": "_unique2(self=input)",
    "unique_consecutive": "unique_consecutive(self=input)",
}
TENSOR_PYTHON = {
    "norm": "linalg_vector_norm(self=self)",
    "split": "split.Tensor(self=self)",
    "unique": "_unique2(self=self)",
    "unique_consecutive": "unique_consecutive(self=self)",
    # python_variable_methods.cpp: device moves and float casts are `to`
    "cuda": "_to_copy(self=self)",
    "cpu": "_to_copy(self=self)",
    "float": "_to_copy(self=self)",
    "double": "_to_copy(self=self)",
    "half": "_to_copy(self=self)",
    "bfloat16": "_to_copy(self=self)",
    "cfloat": "_to_copy(self=self)",
    "cdouble": "_to_copy(self=self)",
    "type": "_to_copy(self=self)",
    # properties (attribute access, not calls)
    "T": "numpy_T(self=self)",
    "mT": "mT(self=self)",
    "H": "matrix_H(self=self)",
    "mH": "mH(self=self)",
}
# python_variable_methods.cpp: casts to an integer or bool dtype; the result carries no gradient
INTEGRAL_CASTS = ("long", "int", "short", "char", "byte", "bool")

# --- operators: Tensor's dunder methods --------------------------------------------------------
# `a * b` is a.__mul__(b), or b.__rmul__(a) when a is not a tensor; `self` is the tensor whose
# method runs. A bare name maps the dunder's (self, other) onto that op's first two parameters.
OPERATORS = {
    "__add__": "add",
    "__radd__": "add",
    "__iadd__": "add_",
    "__sub__": "sub",
    "__isub__": "sub_",
    # torch/_tensor.py: __rsub__ -> rsub(self, other) = other - self
    "__rsub__": "rsub",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__imul__": "mul_",
    "__truediv__": "div",
    "__itruediv__": "div_",
    "__div__": "div",
    # torch/_tensor.py: __rtruediv__ (number / tensor) = self.reciprocal() * other
    "__rtruediv__": "reciprocal(self=self) ; mul.Tensor(self=@0, other=other)",
    "__floordiv__": "floor_divide",
    "__ifloordiv__": "floor_divide_",
    "__rfloordiv__": "floor_divide(self=other, other=self)",
    "__mod__": "remainder",
    "__imod__": "remainder_",
    "__rmod__": "remainder.Scalar_Tensor(other=self)",
    "__pow__": "pow",
    "__ipow__": "pow_",
    # torch/_tensor.py: __rpow__ = torch.pow(other, self)
    "__rpow__": "pow.Scalar(exponent=self)",
    "__matmul__": "matmul",
    "__rmatmul__": "matmul(self=other, other=self)",
    "__neg__": "neg",
    "__pos__": "positive",
    "__abs__": "abs",
    "__invert__": "bitwise_not",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__eq__": "eq",
    "__ne__": "ne",
    "__and__": "__and__",
    "__or__": "__or__",
    "__xor__": "__xor__",
    "__iand__": "__iand__",
    "__ior__": "__ior__",
    "__ixor__": "__ixor__",
    "__lshift__": "__lshift__",
    "__rshift__": "__rshift__",
}
# The Python AST's operator classes, for callers holding an `ast.BinOp`: (dunder, reflected, in-place).
AST_OPERATORS = {
    "Add": ("__add__", "__radd__", "__iadd__"),
    "Sub": ("__sub__", "__rsub__", "__isub__"),
    "Mult": ("__mul__", "__rmul__", "__imul__"),
    "Div": ("__truediv__", "__rtruediv__", "__itruediv__"),
    "FloorDiv": ("__floordiv__", "__rfloordiv__", "__ifloordiv__"),
    "Mod": ("__mod__", "__rmod__", "__imod__"),
    "Pow": ("__pow__", "__rpow__", "__ipow__"),
    "MatMult": ("__matmul__", "__rmatmul__", ""),
    "BitAnd": ("__and__", "__and__", "__iand__"),
    "BitOr": ("__or__", "__or__", "__ior__"),
    "BitXor": ("__xor__", "__xor__", "__ixor__"),
    "LShift": ("__lshift__", "", ""),
    "RShift": ("__rshift__", "", ""),
    "USub": ("__neg__", "", ""),
    "UAdd": ("__pos__", "", ""),
    "Invert": ("__invert__", "", ""),
    "Lt": ("__lt__", "__gt__", ""),
    "LtE": ("__le__", "__ge__", ""),
    "Gt": ("__gt__", "__lt__", ""),
    "GtE": ("__ge__", "__le__", ""),
    "Eq": ("__eq__", "__eq__", ""),
    "NotEq": ("__ne__", "__ne__", ""),
}

# --- torch.nn modules: what forward() calls --------------------------------------------------
# `.name` is the module's parameter of that name (it requires grad unless frozen); the other
# sources are forward()'s parameters. Constructor knowledge (which parameters exist) stays in
# torch_api.PARAM_MODULES.
_CONV = "F.{}(input=input, weight=.weight, bias=.bias)"
MODULES = {
    "Linear": "F.linear(input=input, weight=.weight, bias=.bias)",
    "LazyLinear": "F.linear(input=input, weight=.weight, bias=.bias)",
    "Bilinear": "F.bilinear(input1=input1, input2=input2, weight=.weight, bias=.bias)",
    "Conv1d": _CONV.format("conv1d"),
    "Conv2d": _CONV.format("conv2d"),
    "Conv3d": _CONV.format("conv3d"),
    "ConvTranspose1d": _CONV.format("conv_transpose1d"),
    "ConvTranspose2d": _CONV.format("conv_transpose2d"),
    "ConvTranspose3d": _CONV.format("conv_transpose3d"),
    "BatchNorm1d": "F.batch_norm(input=input, weight=.weight, bias=.bias)",
    "BatchNorm2d": "F.batch_norm(input=input, weight=.weight, bias=.bias)",
    "BatchNorm3d": "F.batch_norm(input=input, weight=.weight, bias=.bias)",
    "SyncBatchNorm": "F.batch_norm(input=input, weight=.weight, bias=.bias)",
    "InstanceNorm1d": "F.instance_norm(input=input, weight=.weight, bias=.bias)",
    "InstanceNorm2d": "F.instance_norm(input=input, weight=.weight, bias=.bias)",
    "InstanceNorm3d": "F.instance_norm(input=input, weight=.weight, bias=.bias)",
    "GroupNorm": "F.group_norm(input=input, weight=.weight, bias=.bias)",
    "LayerNorm": "F.layer_norm(input=input, weight=.weight, bias=.bias)",
    "RMSNorm": "F.rms_norm(input=x, weight=.weight)",
    "Embedding": "F.embedding(input=input, weight=.weight)",
    "EmbeddingBag": "F.embedding_bag(input=input, weight=.weight, offsets=offsets, "
    "per_sample_weights=per_sample_weights)",
    "PReLU": "F.prelu(self=input, weight=.weight)",
    "ReLU": "F.relu(input=input)",
    "ReLU6": "F.relu6(input=input)",
    "LeakyReLU": "F.leaky_relu(input=input)",
    "ELU": "F.elu(input=input)",
    "CELU": "F.celu(input=input)",
    "SELU": "F.selu(input=input)",
    "GELU": "F.gelu(self=input)",
    "SiLU": "F.silu(input=input)",
    "Mish": "F.mish(input=input)",
    "Sigmoid": "sigmoid(self=input)",
    "Tanh": "tanh(self=input)",
    "Softmax": "F.softmax(input=input)",
    "LogSoftmax": "F.log_softmax(input=input)",
    "Softmin": "F.softmin(input=input)",
    "Softplus": "F.softplus(self=input)",
    "Softsign": "F.softsign(input=input)",
    "Tanhshrink": "F.tanhshrink(input=input)",
    "LogSigmoid": "F.logsigmoid(self=input)",
    "GLU": "F.glu(input=input)",
    "Hardswish": "F.hardswish(input=input)",
    "Hardsigmoid": "F.hardsigmoid(input=input)",
    "Hardtanh": "F.hardtanh(input=input)",
    "Threshold": "F.threshold(input=input)",
    "Hardshrink": "F.hardshrink(self=input)",
    "Softshrink": "F.softshrink(self=input)",
    "RReLU": "F.rrelu(input=input)",
    "Dropout": "F.dropout(input=input)",
    "Dropout1d": "F.dropout1d(input=input)",
    "Dropout2d": "F.dropout2d(input=input)",
    "Dropout3d": "F.dropout3d(input=input)",
    "AlphaDropout": "F.alpha_dropout(input=input)",
    "FeatureAlphaDropout": "F.feature_alpha_dropout(input=input)",
    "Flatten": "flatten.using_ints(self=input)",
    "Unflatten": "unflatten.int(self=input)",
    "MaxPool1d": "F.max_pool1d(input=input)",
    "MaxPool2d": "F.max_pool2d(input=input)",
    "MaxPool3d": "F.max_pool3d(input=input)",
    "AvgPool1d": "F.avg_pool1d(self=input)",
    "AvgPool2d": "F.avg_pool2d(self=input)",
    "AvgPool3d": "F.avg_pool3d(self=input)",
    "AdaptiveAvgPool1d": "F.adaptive_avg_pool1d(self=input)",
    "AdaptiveAvgPool2d": "F.adaptive_avg_pool2d(input=input)",
    "AdaptiveAvgPool3d": "F.adaptive_avg_pool3d(input=input)",
    "AdaptiveMaxPool1d": "F.adaptive_max_pool1d(input=input)",
    "AdaptiveMaxPool2d": "F.adaptive_max_pool2d(input=input)",
    "AdaptiveMaxPool3d": "F.adaptive_max_pool3d(input=input)",
    "Upsample": "F.interpolate(input=input)",
    "UpsamplingNearest2d": "F.interpolate(input=input)",
    "UpsamplingBilinear2d": "F.interpolate(input=input)",
    "PixelShuffle": "F.pixel_shuffle(self=input)",
    "PixelUnshuffle": "F.pixel_unshuffle(self=input)",
    "ZeroPad2d": "F.pad(input=input)",
    "ConstantPad1d": "F.pad(input=input)",
    "ConstantPad2d": "F.pad(input=input)",
    "ReflectionPad1d": "F.pad(input=input)",
    "ReflectionPad2d": "F.pad(input=input)",
    "ReplicationPad2d": "F.pad(input=input)",
    "Fold": "F.fold(input=input)",
    "Unfold": "F.unfold(input=input)",
    "CosineSimilarity": "F.cosine_similarity(x1=x1, x2=x2)",
    "PairwiseDistance": "F.pairwise_distance(x1=x1, x2=x2)",
    "L1Loss": "F.l1_loss(input=input, target=target)",
    "MSELoss": "F.mse_loss(input=input, target=target)",
    "CrossEntropyLoss": "F.cross_entropy(input=input, target=target)",
    "NLLLoss": "F.nll_loss(input=input, target=target)",
    "BCELoss": "F.binary_cross_entropy(input=input, target=target)",
    "BCEWithLogitsLoss": "F.binary_cross_entropy_with_logits(input=input, target=target)",
    "KLDivLoss": "F.kl_div(input=input, target=target)",
    "SmoothL1Loss": "F.smooth_l1_loss(input=input, target=target)",
    "HuberLoss": "F.huber_loss(input=input, target=target)",
    "CTCLoss": "F.ctc_loss(log_probs=log_probs, targets=targets, input_lengths=input_lengths, "
    "target_lengths=target_lengths)",
    # PoissonNLLLoss.forward(log_input, target)
    "PoissonNLLLoss": "F.poisson_nll_loss(input=log_input, target=target)",
    "GaussianNLLLoss": "F.gaussian_nll_loss(input=input, target=target, var=var)",
    "MarginRankingLoss": "F.margin_ranking_loss(input1=input1, input2=input2, target=target)",
    "HingeEmbeddingLoss": "F.hinge_embedding_loss(input=input, target=target)",
    "MultiLabelMarginLoss": "F.multilabel_margin_loss(input=input, target=target)",
    "SoftMarginLoss": "F.soft_margin_loss(input=input, target=target)",
    "MultiMarginLoss": "F.multi_margin_loss(input=input, target=target)",
    "TripletMarginLoss": "F.triplet_margin_loss(anchor=anchor, positive=positive, negative=negative)",
}


# --- ops whose result can be their input itself ----------------------------------------------
# A leaf that requires grad stays a leaf through these when nothing changes (GA113 must not fire):
# each returns `self` on that path in its C++ body. `to`, `cuda`, `cpu` and the float casts
# copy when the device or dtype differs: the rule decides (on the script's accelerator they copy).
MAY_RETURN_SELF = {
    "to": "TensorConversions.cpp: to() returns self when dtype, device and layout already match",
    "type_as": "calls to()",
    "type": "calls to()",
    "cuda": "returns self when the tensor already is on that CUDA device",
    "cpu": "returns self when the tensor already is on the CPU",
    "float": "to(float32): self when already float32",
    "double": "to(float64): self when already float64",
    "half": "to(float16): self when already float16",
    "bfloat16": "to(bfloat16): self when already bfloat16",
    "contiguous": "TensorProperties.cpp: returns self when already contiguous",
    "requires_grad_": "sets the flag on self and returns it",
    "real": "UnaryOps.cpp: returns self for a real tensor",
    "conj": "returns self for a real tensor",
    "resolve_conj": "returns self when the conjugate bit is not set",
    "resolve_neg": "returns self when the negative bit is not set",
}

# --- integer and bool outputs ------------------------------------------------------------------
# The YAML types every tensor `Tensor`, whatever its dtype. An output is marked integral when the
# op's output carries no gradient (torch only refuses gradients to integer and bool tensors, and
# the YAML says so through output_differentiability / DONT_REQUIRE_DERIVATIVE / non_differentiable)
# unless listed here as a float output that simply has no derivative.
FLOAT_NONDIFF = {
    # key: `op` (every output) or `op:output`
    "histc": "float counts (histc has output_differentiability [False])",
    "histogram": "float counts and bin edges",
    "hash_tensor": "float hash values",
    "view.dtype": "reinterprets the bytes as another dtype, float or not",
    "linalg_lstsq:singular_values": "float singular values, returned without gradient",
    "log_sigmoid_forward:buffer": "a float intermediate saved for backward",
    "quantize_per_tensor": "a quantized tensor",
    "quantize_per_channel": "a quantized tensor",
    **dict.fromkeys(SHAPE_ONLY, "SHAPE_ONLY: the input's dtype"),
}

"""What torch names and objects do, entered into the interpreter's semantics tables.

One place says which handler answers which qualified name (in the order they are asked) and
which object type; the handlers live in their domain modules: modules.py, optimizers.py,
tensors.py, autograd.py, grad_mode.py.
"""

from __future__ import annotations

from ..interp.objects import CtxObj, ModuleObj, OptimObj, ScalerObj, SchedObj
from ..interp.semantics import CallTable, ObjectSemantics, Semantics, TensorSemantics
from ..ops import torch_api as T
from . import autograd, grad_mode, leaves, modules, numeric_ops, optimizers, packed, processes, tensors


def tensor_semantics() -> TensorSemantics:
    return TensorSemantics(
        attr=tensors.tensor_attr,
        method=tensors.tensor_method,
        binop=tensors.tensor_binop,
        negate=tensors.negate,
        getitem=tensors.getitem,
        inplace=tensors.inplace_update,
        set_requires_grad=leaves.set_requires_grad,
    )


def register_calls(calls: CallTable) -> None:
    calls.names(T.PARAMETER_CLASSES, modules.new_parameter)
    calls.names(T.VARIABLE_CLASSES, leaves.variable)
    calls.names(T.PACKING_CALLS, packed.pack)
    calls.names(T.UNPACKING_CALLS, packed.unpack)
    calls.when(lambda qual, head, short: head == "torch.nn" and short[:1].isupper(), modules.new_module)
    calls.when(
        lambda qual, head, short: short == "__init__" and head.startswith("torch.nn."), modules.explicit_base_init
    )
    calls.when(
        lambda qual, head, short: head == "torch.optim.lr_scheduler" or short in T.SCHEDULERS,
        optimizers.new_scheduler,
    )
    calls.when(
        lambda qual, head, short: (
            short in T.OPTIMIZERS
            or (head == "torch.optim" and short[:1].isupper() and short != "Optimizer")
            or qual == T.PICKED_OPTIMIZER
        ),
        optimizers.new_optimizer,
    )
    calls.when(lambda qual, head, short: short in T.SCALERS, optimizers.new_scaler)
    calls.names(T.IS_GRAD_ENABLED, grad_mode.is_grad_enabled)
    calls.names(T.NOGRAD_CTX, grad_mode.no_grad)
    calls.names(T.GRAD_CTX, grad_mode.enable_grad)
    calls.names(T.SET_GRAD_CTX, grad_mode.set_grad_enabled)
    calls.names(T.SET_DEFAULT_DTYPE, numeric_ops.set_default_dtype)
    calls.names(T.SPAWN, processes.spawn)
    calls.names(T.PROCESS, processes.process)
    calls.names(T.AUTOCAST_CTX, grad_mode.autocast)
    calls.names(("torch.autograd.grad",), autograd.grad)
    calls.names(("torch.autograd.backward",), autograd.backward)
    calls.names((autograd.FUNCTION_APPLY,), autograd.function_apply)
    calls.names(
        ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"), autograd.checkpoint
    )
    calls.when(autograd.is_clip, autograd.clip)
    calls.when(lambda qual, head, short: qual.startswith(T.INIT_PREFIX), modules.init_function)
    calls.heads(("torch.nn.functional",), tensors.functional_call)
    calls.heads(("torch", "torch.linalg", "torch.special", "torch.fft"), tensors.torch_call)
    calls.names(("copy.deepcopy", "copy.copy"), modules.copy_module)
    calls.when(
        lambda qual, head, short: short in T.WRAPPERS or qual == "torch.compile",
        modules.wrapper,
    )
    calls.when(lambda qual, head, short: head.split(".")[0] in T.NUMPY_MODULES, tensors.numpy_function)
    calls.when(lambda qual, head, short: qual.startswith("torch.") and short[:1].islower(), tensors.torch_call)
    calls.when(
        lambda qual, head, short: qual.startswith("torch.distributions.") and short[:1].isupper(), tensors.distribution
    )


def register(sem: Semantics) -> None:
    register_calls(sem.calls)
    sem.objects[ModuleObj] = ObjectSemantics(
        attr=modules.module_attr,
        setattr=modules.module_setattr,
        method=modules.module_method,
        call=modules.module_call,
        getitem=modules.module_getitem,
        setitem=modules.module_setitem,
    )
    sem.objects[OptimObj] = ObjectSemantics(attr=optimizers.optimizer_attr, method=optimizers.optimizer_method)
    sem.objects[SchedObj] = ObjectSemantics(method=optimizers.scheduler_method)
    sem.objects[ScalerObj] = ObjectSemantics(method=optimizers.scaler_method)
    sem.objects[CtxObj] = ObjectSemantics(call=grad_mode.decorate)
    sem.with_statement = grad_mode.with_statement
    sem.store = grad_mode.note_cast
    sem.after_init = modules.after_init
    sem.base_init = modules.base_init
    sem.inherited_attr.append(autograd.function_attr)
    sem.new_optimizer = optimizers.new_optimizer
    sem.new_scheduler = optimizers.new_scheduler
    sem.unknown_method += [grad_mode.enter_context, tensors.unseen_method, tensors.unseen_tensor_method]

"""The interpreter's semantics tables, assembled: Python's builtins, torch, frameworks (Lightning,
HF Trainer, DeepSpeed, accelerate) and the libraries users build models with.

`semantics()` gives the one table every interpreter of a process shares (it holds no per-run
state: handlers keep that in the interpreter's state).
"""

from __future__ import annotations

import functools

from ..interp import builtins
from ..interp.semantics import CallTable, Semantics
from ..torch import modules as torch_modules
from ..torch import optimizers as torch_optimizers
from ..torch import register as torch_register
from . import adapters, einops_ops, frameworks, registries, tables
from . import semantics as library


def build() -> Semantics:
    calls = CallTable()
    builtins.register(calls)
    sem = Semantics(calls=calls, tensors=torch_register.tensor_semantics())
    torch_register.register(sem)
    # other libraries' optimizers and data-parallel wrappers, modelled as torch's
    calls.when(lambda qual, head, short: tables.named_as_optimizer(short), library.named_optimizer)
    calls.when(lambda qual, head, short: short in tables.THIRD_PARTY_WRAPPERS, torch_modules.wrapper)
    calls.when(lambda qual, head, short: short in tables.THIRD_PARTY_SCALERS, torch_optimizers.new_scaler)
    calls.when(einops_ops.is_einops, einops_ops.einops_call)
    # names no torch handler answered: a framework's, else a library's
    calls.when(lambda qual, head, short: True, frameworks.framework_fallback)
    calls.when(lambda qual, head, short: True, library.library_fallback)
    # a library model's own structure is asked before a framework's methods
    sem.modules += [library.LIBRARY_MODELS, frameworks.FRAMEWORK_MODULES, adapters.ADAPTERS]
    sem.class_base = library.library_base
    sem.unseen_module = library.unseen_library_module
    sem.unknown_model = library.unknown_callee_model
    sem.annotated_module = library.annotated_module
    sem.wrapping = frameworks.wrapping_method
    sem.on_instance.append(frameworks.framework_init)
    sem.instance_method.append(frameworks.framework_instance_method)
    sem.unknown_method[:0] = [frameworks.framework_unknown_method, frameworks.backward_call]
    sem.unknown_method.append(frameworks.wrapping_method)
    sem.unknown_method.append(registries.registry_method)
    sem.unknown_result.append(registries.registry_method)
    sem.objects[registries.RegistryPick] = registries.OBJECT_SEMANTICS
    sem.after_run.append(frameworks.run_frameworks)
    return sem


@functools.cache
def semantics() -> Semantics:
    return build()

"""Adapters injected into a model by PEFT: `get_peft_model(model, LoraConfig(...))`.

The call adds new, trainable parameters (the adapters) inside the model it is given, in place,
freezes the model's own parameters except those its configuration keeps trainable (biases,
`modules_to_save`: which, the engine does not read), and returns a wrapper whose forward is the
model's. The common defect: the optimizer was built before the call, over the model's parameters
as they were; it never holds the adapters, and what it holds is (mostly) frozen now, so nothing
trains (GA108 on the adapters).

Modelled here: one parameter unit for all the adapters, registered on the model when the call
runs (so `model.parameters()` after it yields them, and an optimizer built before does not hold
them), the model's own units frozen *maybe*, the returned wrapper the model itself, and the
adapters reached by the loss whenever a forward of the model carries gradient from its own
parameters (the adapters sit inside its layers). Prompt-learning configurations (prompt tuning,
prefix tuning, P-tuning) put their parameters in the wrapper, not in the model: a call whose
configuration is visibly one of them is not modelled.

Checked against peft 0.21.2: peft/mapping_func.py `get_peft_model(model, peft_config, ...)`,
peft/mapping.py `inject_adapter_in_model(peft_config, model, ...)`, and
BaseTuner._mark_only_adapters_as_trainable.
"""

from __future__ import annotations

import ast
import re

from ..interp.core import Core
from ..interp.objects import MAYBE, TRAINABLE, ModuleObj, Site, Unit, module_value
from ..interp.semantics import ModuleExtension
from ..interp.values import V
from ..torch import leaves

# qualified name -> (position, keyword) of the model argument, and of the configuration
_GET_PEFT_MODEL = ((0, "model"), (1, "peft_config"))
_INJECT = ((1, "model"), (0, "peft_config"))
ADAPTER_FUNCTIONS = {
    "peft.get_peft_model": _GET_PEFT_MODEL,
    "peft.mapping_func.get_peft_model": _GET_PEFT_MODEL,
    "peft.mapping.get_peft_model": _GET_PEFT_MODEL,
    "peft.inject_adapter_in_model": _INJECT,
    "peft.mapping.inject_adapter_in_model": _INJECT,
}
_PROMPT_LEARNING = re.compile(r"Prompt|Prefix|PTuning|P_Tuning", re.I)
ADAPTERS_KEY = "<adapters>"


def _arg(args, kwargs, where):
    pos, key = where
    v = kwargs.get(key, args[pos] if len(args) > pos else None)
    return v if isinstance(v, V) else None


def peft_adapters(ip: Core, qual: str, args, kwargs, node) -> V | None:
    where = ADAPTER_FUNCTIONS.get(qual)
    if where is None:
        return None
    model_at, config_at = where
    given = _arg(args, kwargs, model_at)
    mods = given.of(ModuleObj) if given is not None else []
    if len(mods) != 1:
        return None
    cfg = _arg(args, kwargs, config_at)
    if cfg is not None and _prompt_learning(ip, cfg):
        return None
    (m,) = mods
    for u in m.units():
        if u.frozen == TRAINABLE:
            u.frozen = MAYBE  # frozen unless the configuration keeps it trainable
    site = Site(ip.st.sf, node)
    unit = Unit(Unit.PARAM, "adapters", site, ip.seq(), count=None)
    m.register(ADAPTERS_KEY, unit)
    leaves.note_new_units(ip, [unit], node)
    return module_value(m)


def _prompt_learning(ip: Core, cfg: V) -> bool:
    """The configuration is visibly made by a prompt-learning class (`PrefixTuningConfig(...)`)."""
    made = cfg.site
    if isinstance(made, ast.Call):
        name = ip.st.sf.segment(made.func) or ""
        return bool(_PROMPT_LEARNING.search(name))
    return False


def with_adapters(ip: Core, m: ModuleObj, out: V) -> V:
    """A forward of a model with adapters: they get gradient when its own parameters do."""
    unit = m.children.get(ADAPTERS_KEY)
    if not isinstance(unit, Unit) or unit in out.org or not (out.org & set(m.units())):
        return out
    return out.replace(org=out.org | {unit})


# a forward of a model with adapters (the semantics tables' nn.Module extension)
ADAPTERS = ModuleExtension(result=with_adapters)

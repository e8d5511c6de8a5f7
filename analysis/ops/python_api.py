"""What torch's Python classes say about themselves, read when the table is generated: the
torch.nn modules (their parameters, the constructor flags that drop them, where `inplace` and
`reduction` are, the function forward() runs), nn.Module's own methods, and torch.optim's
optimizers and schedulers. Generation time only (imports torch); generate.py writes the result
into `_engine_sets.py`.

How each fact is read:
- parameters: the module is built with its defaults on the `meta` device (each required
  argument 2; a class that cannot be built that way has no entry) and `named_parameters()` read.
- flags: each boolean constructor argument is flipped and the module built again: an argument
  whose False drops every parameter is an `affine` flag, one whose False drops exactly the
  parameters named `*bias*` a `bias` flag (the engine's two kinds); an argument that adds other
  parameters (MultiheadAttention's add_bias_kv) is no flag the engine models and is left out.
  Its position is its index in the constructor's signature (None when keyword-only).
- the function forward() runs: what every `return` of forward() calls, as `F.relu`, `torch.tanh`
  or `Tensor.flatten` (a method of forward's input), following `self._method(...)` returns
  (Conv2d's `_conv_forward`); no entry when the returns disagree or call something else.
- optimizers and schedulers: the classes of torch.optim and torch.optim.lr_scheduler deriving
  from Optimizer and LRScheduler (the bases themselves excluded).
- nn.Module's methods: its public callables; those annotated to return `Self` give the module
  back (`typing.get_overloads` for `to`, whose implementation is not annotated).
- torch.Tensor's attributes: its public names (`dir`), so that a method no tensor has (`.items()`)
  is known not to run on the tensor part of a value that may also be a dict.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import typing
import warnings

AFFINE = "affine"  # False drops every parameter
BIAS = "bias"  # False drops the parameters named *bias*


def _classes(module, base) -> dict[str, type]:
    return {
        k: v
        for k, v in sorted(vars(module).items())
        if inspect.isclass(v) and issubclass(v, base) and not k.startswith("_")
    }


def _init_params(cls) -> list[inspect.Parameter]:
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return []
    return params


def _build(cls, overrides: dict):
    """The module built with its defaults (required arguments 2), on the meta device."""
    kwargs = {}
    for p in _init_params(cls):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in overrides:
            kwargs[p.name] = overrides[p.name]
        elif p.default is p.empty:
            kwargs[p.name] = 2
    if "device" in {p.name for p in _init_params(cls)}:
        kwargs["device"] = "meta"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecation notes of the constructors
            return cls(**kwargs)
    except Exception:  # a class that cannot be built from its defaults has no entry
        return None


def _param_names(cls, overrides=None) -> tuple[str, ...] | None:
    m = _build(cls, overrides or {})
    if m is None:
        return None
    return tuple(n for n, _ in m.named_parameters())


def _flag_kind(on: tuple[str, ...], off: tuple[str, ...]) -> str | None:
    """The engine's kind of a flag whose True gives parameters `on` and False `off`."""
    if set(off) - set(on) or set(on) == set(off):
        return None  # False adds parameters, or changes nothing
    if not off:
        return AFFINE
    if {n for n in on if n not in off} == {n for n in on if "bias" in n}:
        return BIAS
    return None


def module_params(cls) -> tuple[tuple[str, ...], dict[str, tuple]] | None:
    """(parameter names with every flag on, {kind: (position, keyword, default)}), or None when
    the class cannot be built from its defaults. Flags are read with the others on (a bias
    that InstanceNorm drops only once `affine=True`)."""
    if _param_names(cls) is None:
        return None
    bools = [(i, p) for i, p in enumerate(_init_params(cls)) if isinstance(p.default, bool)]
    on: dict[str, bool] = {}
    flags: dict[str, tuple] = {}
    for _ in range(len(bools) + 1):
        found = False
        for i, p in bools:
            if p.name in on:
                continue
            t, f = _param_names(cls, {**on, p.name: True}), _param_names(cls, {**on, p.name: False})
            kind = _flag_kind(t, f) if t is not None and f is not None else None
            if kind is None or kind in flags:
                continue
            on[p.name] = True
            flags[kind] = (i if p.kind == p.POSITIONAL_OR_KEYWORD else None, p.name, p.default)
            found = True
        if not found:
            break
    names = _param_names(cls, on)
    return (names, flags) if names is not None else None


def keyword_position(cls, keyword: str) -> int | bool | None:
    """The constructor's positional index of `keyword`; None when keyword-only; False when absent."""
    for i, p in enumerate(_init_params(cls)):
        if p.name == keyword:
            return i if p.kind == p.POSITIONAL_OR_KEYWORD else None
    return False


def _returns(fn) -> list[tuple[ast.expr | None, str | None]] | None:
    """(value, forward's first argument) of each `return` in `fn`'s source."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    tree = ast.parse(src).body[0]
    if not isinstance(tree, ast.FunctionDef):
        return None
    first = tree.args.args[1].arg if len(tree.args.args) > 1 else None
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Return):
            out.append((n.value, first))
    return out


def forward_function(cls, depth: int = 0) -> str | None:
    """The function (`F.relu`, `torch.tanh`) or tensor method (`Tensor.flatten`) every `return`
    of forward() calls, or None."""
    return _called(cls, getattr(cls, "forward", None), depth)


def _called(cls, fn, depth: int) -> str | None:
    returns = _returns(fn) if fn is not None else None
    if not returns:
        return None
    found = set()
    for value, first in returns:
        f = value.func if isinstance(value, ast.Call) else None
        if not isinstance(f, ast.Attribute) or not isinstance(f.value, ast.Name):
            return None
        owner = f.value.id
        if owner in ("F", "torch"):
            found.add(f"{owner}.{f.attr}")
        elif first is not None and owner == first:
            found.add(f"Tensor.{f.attr}")
        elif owner == "self" and depth < 2 and callable(getattr(cls, f.attr, None)):
            inner = _called(cls, getattr(cls, f.attr), depth + 1)
            if inner is None:
                return None
            found.add(inner)
        else:
            return None
    return found.pop() if len(found) == 1 else None


def module_facts() -> dict:
    """The torch.nn facts `_engine_sets.py` holds (see the module docstring)."""
    import torch.nn as nn

    classes = _classes(nn, nn.Module)
    params, flags, inplace, reduction, functions = {}, {}, {}, {}, {}
    for name, cls in classes.items():
        spec = module_params(cls)
        # parameters of the module or of a direct child (MultiheadAttention's out_proj): deeper
        # ones (a Transformer's layers) depend on arguments such as num_layers
        if spec is not None and spec[0] and all(n.count(".") <= 1 for n in spec[0]):
            params[name] = spec[0]
            if spec[1]:
                flags[name] = spec[1]
        pos = keyword_position(cls, "inplace")
        if pos is not False:
            inplace[name] = pos
        for p in _init_params(cls):
            if p.name == "reduction" and isinstance(p.default, str):
                reduction[name] = p.default
        fn = forward_function(cls)
        if fn is not None:
            functions[name] = fn
    return {
        "NN_MODULES": frozenset(classes),
        "MODULE_PARAMS": params,
        "MODULE_FLAGS": flags,
        "MODULE_INPLACE": inplace,
        "MODULE_REDUCTION": reduction,
        "MODULE_FORWARD": functions,
        **_module_methods(nn.Module),
    }


def _module_methods(module_cls: type) -> dict[str, frozenset[str]]:
    if sys.version_info < (3, 11):
        raise RuntimeError("reading nn.Module's methods needs Python 3.11 (typing.get_overloads, typing.Self)")
    methods, self_methods = set(), set()
    for name in dir(module_cls):
        fn = getattr(module_cls, name)
        if name.startswith("_") or not callable(fn):
            continue
        methods.add(name)
        anns = [_return_annotation(f) for f in (fn, *typing.get_overloads(fn))]
        if any(a is typing.Self for a in anns):
            self_methods.add(name)
    return {"MODULE_METHODS": frozenset(methods), "MODULE_SELF_METHODS": frozenset(self_methods)}


def _return_annotation(fn):
    try:
        return inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return None


def optim_facts() -> dict:
    import torch.optim as optim
    from torch.optim import lr_scheduler

    opts = _classes(optim, optim.Optimizer)
    scheds = _classes(lr_scheduler, lr_scheduler.LRScheduler)
    return {
        "OPTIMIZERS": frozenset(n for n, c in opts.items() if c is not optim.Optimizer),
        "SCHEDULERS": frozenset(n for n, c in scheds.items() if c is not lr_scheduler.LRScheduler),
    }


def tensor_facts() -> dict:
    """TENSOR_ATTRIBUTES: every public name a torch.Tensor has (methods, properties)."""
    import torch

    return {"TENSOR_ATTRIBUTES": frozenset(n for n in dir(torch.Tensor) if not n.startswith("_"))}


def python_facts() -> dict:
    return {**module_facts(), **optim_facts(), **tensor_facts()}

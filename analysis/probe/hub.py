"""One patch of `torch.autograd.backward` / `torch.autograd.grad`, shared by every listener.

`Tensor.backward()` calls `torch.autograd.backward` through the module attribute, so replacing
that attribute while a probe records sees every backward pass (the way torch's own anomaly mode
cannot: it does not say which call site ran). The originals come back when the last listener
leaves. Listeners get `before(kind, tensors, site)` and `after(kind, site)`; `before` may add
listeners (a script run attaches its probe at the first backward it is waiting for), and those
see the same call.
"""

from __future__ import annotations

import os
import sys
from types import FrameType

from ._torch import require_torch

_HERE = os.path.dirname(os.path.abspath(__file__))
_listeners: list = []
_originals: dict = {}
_TORCH_DIR = None


class Site:
    """Where a backward() was called from: the first frame outside torch and this package."""

    __slots__ = ("function", "line", "path")

    def __init__(self, path, line, function):
        self.path, self.line, self.function = path, line, function

    def __repr__(self):
        return f"{os.path.basename(self.path)}:{self.line}"

    def label(self) -> str:
        return f"{os.path.basename(self.path)}:{self.line} in {self.function}"


def caller_site(depth=2) -> Site:
    f: FrameType | None = sys._getframe(depth)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_HERE) and not (_TORCH_DIR and fn.startswith(_TORCH_DIR)):
            return Site(fn, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return Site("?", 0, "?")


def _as_tensors(torch, tensors) -> list:
    if isinstance(tensors, torch.Tensor):
        return [tensors]
    try:
        return [t for t in tensors if isinstance(t, torch.Tensor)]
    except TypeError:
        return []


def _dispatch(kind, tensors, site, inputs=None):
    i = 0
    while i < len(_listeners):
        _listeners[i].before(kind, tensors, site, inputs)
        i += 1


def _done(kind, site):
    for listener in list(_listeners):
        listener.after(kind, site)


def _install():
    global _TORCH_DIR
    torch = require_torch()
    _TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
    orig_backward, orig_grad = torch.autograd.backward, torch.autograd.grad

    def backward(tensors, *args, **kwargs):
        site = caller_site()
        _dispatch("backward", _as_tensors(torch, tensors), site)
        try:
            return orig_backward(tensors, *args, **kwargs)
        finally:
            _done("backward", site)

    def grad(outputs, inputs, *args, **kwargs):
        site = caller_site()
        _dispatch("grad", _as_tensors(torch, outputs), site, _as_tensors(torch, inputs))
        try:
            return orig_grad(outputs, inputs, *args, **kwargs)
        finally:
            _done("grad", site)

    # (a function takes attributes; its type declares none)
    backward.__wrapped__ = orig_backward  # type: ignore[attr-defined]
    grad.__wrapped__ = orig_grad  # type: ignore[attr-defined]
    _originals.update(backward=orig_backward, grad=orig_grad)
    torch.autograd.backward, torch.autograd.grad = backward, grad


def _uninstall():
    torch = require_torch()
    torch.autograd.backward = _originals.pop("backward")
    torch.autograd.grad = _originals.pop("grad")


def listen(listener):
    if not _listeners:
        _install()
    _listeners.append(listener)


def leave(listener):
    if listener in _listeners:
        _listeners.remove(listener)
        if not _listeners and _originals:
            _uninstall()

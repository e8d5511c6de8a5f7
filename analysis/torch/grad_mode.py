"""Grad-mode and autocast regions as the interpreter replays `with` statements: `torch.no_grad()`,
`torch.enable_grad()`, `set_grad_enabled(flag)`, and float16 `autocast` regions, which count as
training ones (GA409) only when something computed in them with gradient reaches a backward.

A mixin of Interpreter (interpreter.py).
"""

from __future__ import annotations

from ..interp.objects import CtxObj, DictObj, ListObj, Site
from ..interp.trace import SUSPICIOUS, RiskRec
from ..interp.values import UNKNOWN, V, requires_grad


class GradModeOps:
    def _s_with(self, stmt, env):
        saved_nograd, saved_known = self.nograd, self.grad_known
        casts = []
        try:
            for item in stmt.items:
                cm = self.eval(item.context_expr, env)
                for o in cm.of(CtxObj):
                    if o.kind == "nograd":
                        self.nograd = Site(self.sf, item.context_expr) if self.nograd is None else self.nograd
                    elif o.kind == "grad":
                        self.nograd, self.grad_known = None, True
                    elif o.kind == "other" and self.nograd is None:
                        self.grad_known = False  # set_grad_enabled(flag) with a flag not known here
                    elif o.kind == "autocast":
                        dtype = o.detail.const if isinstance(o.detail, V) and isinstance(o.detail.const, str) else ""
                        enabled = o.enabled
                        if enabled is not False:
                            casts.append((item.context_expr, dtype))
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, cm if not cm.of(CtxObj) else UNKNOWN, env, stmt)
            if not casts:
                return self.exec_block(stmt.body, env)
            # under no_grad (in any order of the items) the region records no graph. Otherwise what
            # it computes with gradient is tagged (a latent risk): the region trains when a tagged
            # value reaches a backward (build.py keeps its event then), or when backward runs inside
            # it; a validation pass through a frozen model or an unseen pipeline does neither
            region = CastRegion(RiskRec("autocast", Site(self.sf, casts[0][0]), "", SUSPICIOUS, self.ctx, True))
            self.casts.append(region)
            try:
                return self.exec_block(stmt.body, env)
            finally:
                self.casts.pop()
                if self.nograd is None and (region.carried or region.backward):
                    for node, dtype in casts:
                        self.event("autocast", node, None if region.backward else region.tag, detail=dtype)
        finally:
            self.nograd, self.grad_known = saved_nograd, saved_known

    def note_cast(self, value: V) -> V:
        """A value made inside autocast regions, tagged with them when it carries gradient."""
        if self.nograd is not None or not _carries_grad(value):
            return value
        for region in self.casts:
            region.carried = True
        return value.replace(risks=value.risks | {r.tag for r in self.casts})


def _carries_grad(v: V, depth: int = 0) -> bool:
    """`v` (or, shallowly, what a list, tuple or dict of it holds) may carry gradient now."""
    if not isinstance(v, V):
        return False
    if requires_grad(v):
        return True
    if depth > 1:
        return False
    inner = list(v.items or ())
    for o in v.objs:
        if isinstance(o, ListObj):
            inner.extend(e for e in (o.content,) if e is not None)
        elif isinstance(o, DictObj):
            inner.extend(o.keys.values())
            if o.rest is not None:
                inner.append(o.rest)
    return any(_carries_grad(x, depth + 1) for x in inner)


class CastRegion:
    """An autocast region being run: its tag, whether it computed gradient or ran a backward."""

    __slots__ = ("backward", "carried", "tag")

    def __init__(self, tag):
        self.tag = tag
        self.carried = False
        self.backward = False

"""Duck-typed optimizers: a value the engine did not see made (a root function's argument, an
attribute of one) on which the code calls both `zero_grad()` and `step()` is an optimizer of
parameters the engine cannot name.

A trainer method handed its optimizer (`def run_step(self, models, optimizers, ...)`, then
`adam = optimizers.adam`), or a class keeping the one it was given (`self._optimizer = optimizer`),
is checked on arguments nothing gives: without this the order of its `backward()`, `zero_grad()`,
`step()` and clipping was not judged at all. Neither call alone decides: a module has
`zero_grad()` and no `step()`, a learning-rate scheduler `step()` and no `zero_grad()`. The
receiver is matched by its text in the function that calls it, or, for `self.<attr>`, anywhere in
the methods of that function's class (`reinforce` clears, the `step` method it calls steps).
What the findings on such an optimizer rest on is said in their premises: that it is one at all.
"""

from __future__ import annotations

import ast

from .objects import Group, OptimObj, Site, SymObj

_CALLS = frozenset(("zero_grad", "step"))


def _receiver(node) -> str | None:
    f = getattr(node, "func", None)
    if not isinstance(f, ast.Attribute):
        return None
    try:
        return ast.unparse(f.value)
    except Exception:  # a node made by the engine itself
        return None


def _both_called(scope: ast.AST, text: str) -> bool:
    """Both calls are made on the receiver written `text` in `scope`; the receivers of each are
    gathered once per scope node and kept on it (the editor re-runs a file at every edit)."""
    found = getattr(scope, "_gradaudit_ducks", None)
    if found is None:
        called: dict[str, set[str]] = {}
        for n in ast.walk(scope):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CALLS:
                receiver = _receiver(n)
                if receiver is not None:
                    called.setdefault(receiver, set()).add(n.func.attr)
        found = scope._gradaudit_ducks = frozenset(r for r, names in called.items() if names == _CALLS)  # type: ignore[attr-defined]
    return text in found


def optimizer_of(ip, o: SymObj, node) -> OptimObj | None:
    """The optimizer the unknown value `o` is taken for at the call `node` (`x.zero_grad()`,
    `x.step()`), made on the first such call; None when it is not taken for one."""
    if o.optim is not None:
        return o.optim
    text = _receiver(node)
    if text is None or "sched" in text.lower() or "scaler" in text.lower():
        return None
    frame = ip.st.stack[-1] if ip.st.stack else None
    fn = frame.func if frame is not None else None
    if fn is None or not hasattr(fn.node, "body"):
        return None
    scope = fn.node
    if text.startswith("self.") and fn.cls is not None:
        scope = fn.cls.node
    if not _both_called(scope, text):
        return None
    opt = OptimObj("", text.rsplit(".", 1)[-1], o.site or Site(ip.st.sf, node), o.seq, ())
    opt.duck = True
    opt.complete = opt.args_only = False
    unit = ip.sym_unit(o)
    opt.groups.append(Group(frozenset((unit,)), False, False, opt.site))
    ip.st.trace.optimizers.append(opt)
    # it existed before the backward() calls already recorded (it was handed in): they feed it too
    for rec in ip.st.trace.backwards:
        if rec.seq > o.seq:
            rec.optimizers.append((opt, opt.units(), False))
    o.optim = opt
    return opt

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

Duck-typed GradScalers the same way: a value on which `scale()` and `step(optimizer)` (or
`update()`) are called is a scaler (`def train_one_epoch(self, ..., optimizer, scaler)`), and the
value it steps, cleared with `zero_grad()` where it is called, an optimizer: the order of clipping
and `unscale_()` in such a trainer is judged as with a scaler the engine saw made.
"""

from __future__ import annotations

import ast

from .objects import Group, OptimObj, ScalerObj, Site, SymObj

_CALLS = frozenset(("zero_grad", "step"))
_SCALER_CALLS = frozenset(("scale", "step", "update", "unscale_"))


def text_of(node) -> str | None:
    """How the expression `node` is written; None for a node the engine made itself."""
    try:
        return ast.unparse(node)
    except Exception:
        return None


def _receiver(node) -> str | None:
    f = getattr(node, "func", None)
    return text_of(f.value) if isinstance(f, ast.Attribute) else None


def _called(scope: ast.AST) -> dict[str, frozenset[str]]:
    """The methods of `_CALLS` and `_SCALER_CALLS` called on each receiver written in `scope`, a
    scaler's `step(x)` counted as a step of `x`; gathered once per scope node and kept on it (the
    editor re-runs a file at every edit)."""
    found = getattr(scope, "_gradaudit_ducks", None)
    if found is None:
        called: dict[str, set[str]] = {}
        stepping: list[tuple[str, ast.expr]] = []  # `r.step(x)`: (r, x), a scaler's step of x if r is one
        for n in ast.walk(scope):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
                continue
            name = n.func.attr
            if name in _CALLS or name in _SCALER_CALLS:
                receiver = _receiver(n)
                if receiver is not None:
                    called.setdefault(receiver, set()).add(name)
                    if name == "step" and n.args:
                        stepping.append((receiver, n.args[0]))
        for receiver, arg in stepping:
            text = text_of(arg) if _is_scaler(called[receiver]) else None
            if text is not None:
                called.setdefault(text, set()).add("step")
        found = {r: frozenset(names) for r, names in called.items()}
        scope._gradaudit_ducks = found  # type: ignore[attr-defined]
    return found


def _is_scaler(names) -> bool:
    return "scale" in names and ("step" in names or "update" in names)


def _scope(ip, text: str):
    frame = ip.st.stack[-1] if ip.st.stack else None
    fn = frame.func if frame is not None else None
    if fn is None or not hasattr(fn.node, "body"):
        return None
    if text.startswith("self.") and fn.cls is not None:
        return fn.cls.node
    return fn.node


def scaler_of(ip, o: SymObj, node) -> ScalerObj | None:
    """The GradScaler the unknown value `o` is taken for at the call `node` (`x.scale(loss)`,
    `x.step(opt)`, `x.unscale_(opt)`, `x.update()`); None when it is not taken for one."""
    if o.scaler is not None:
        return o.scaler
    text = _receiver(node)
    scope = _scope(ip, text) if text is not None else None
    if text is None or scope is None or not _is_scaler(_called(scope).get(text, ())):
        return None
    o.scaler = ScalerObj("", text.rsplit(".", 1)[-1], o.site or Site(ip.st.sf, node), o.seq)
    return o.scaler


def names_a_schedule(node) -> bool:
    """The call's receiver is written as a learning-rate schedule (`scheduler.step()`,
    `self.lr_sched.step()`): not an optimizer's step."""
    text = _receiver(node)
    return text is not None and "sched" in text.lower()


def optimizer_of(ip, o: SymObj, node, text: str | None = None) -> OptimObj | None:
    """The optimizer the unknown value `o` is taken for at the call `node` (`x.zero_grad()`,
    `x.step()`, or a scaler's `step(x)`: `text` is then how `x` is written), made on the first such
    call; None when it is not taken for one."""
    if o.optim is not None:
        return o.optim
    if text is None:
        text = _receiver(node)
    if text is None or "sched" in text.lower() or "scaler" in text.lower():
        return None
    scope = _scope(ip, text)
    if scope is None or not _called(scope).get(text, frozenset()) >= _CALLS:
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

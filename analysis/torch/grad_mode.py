"""Grad-mode and autocast regions as the interpreter replays `with` statements: `torch.no_grad()`,
`torch.enable_grad()`, `set_grad_enabled(flag)`, and float16 `autocast` regions, which count as
training ones (GA409) only when something computed in them with gradient reaches a backward.

The `with` statement handler and the store hook of the semantics tables (torch/register.py).
"""

from __future__ import annotations

from ..interp.core import Core
from ..interp.objects import CtxObj, DictObj, FuncObj, GenCtxObj, InstanceObj, ListObj, Site
from ..interp.trace import SUSPICIOUS, EventKind, RiskRec
from ..interp.values import NONE, UNKNOWN, Kind, V, const, join_all, requires_grad
from ..source import nodes


def with_statement(ip: Core, stmt, env):
    saved_nograd, saved_known = ip.st.nograd, ip.st.grad_known
    casts: list = []
    exits: list = []
    accumulating = len(ip.st.accumulating)
    try:
        out = _with_body(ip, stmt, env, casts, exits)
    finally:
        ip.st.nograd, ip.st.grad_known = saved_nograd, saved_known
        del ip.st.accumulating[accumulating:]
    # a project's context manager class: its __exit__ runs when the block ends, however it ends
    # (adversarial training's `ctx_noparamgrad(model)` freezes the parameters in __init__ and gives
    # back their requires_grad in __exit__: without it they looked frozen for good)
    for users, node in reversed(exits):
        _call_each(ip, users, "__exit__", [NONE, NONE, NONE], node)
    return out


def _call_each(ip: Core, users: list[InstanceObj], name: str, args: list, node) -> V:
    """`name` of each instance the context manager may be, called on it: what they give, joined."""
    out = []
    for o in users:
        method = o.cls.lookup(name)
        if method is not None:
            out.append(ip.call_function(method, args, {}, node, self_v=V(Kind.INST, frozenset((o,)))))
    return join_all(out) if out else NONE


def _user_contexts(cm: V) -> list[InstanceObj]:
    """The instances of project classes with both `__enter__` and `__exit__` that `cm` may be."""
    return [
        o
        for o in cm.objs
        if isinstance(o, InstanceObj) and o.cls.lookup("__enter__") is not None and o.cls.lookup("__exit__") is not None
    ]


def _with_body(ip: Core, stmt, env, casts: list, exits: list):
    for item in stmt.items:
        cm = ip.eval(item.context_expr, env)
        ctxs = cm.of(CtxObj)
        if _nograd_on_one_path(ip, cm, ctxs):
            ctxs = [o for o in ctxs if o.kind != "nograd"]
        for o in ctxs:
            if _enter_grad_mode(ip, o, item.context_expr):
                continue
            if o.kind == "autocast":
                dtype = o.detail.const if isinstance(o.detail, V) and isinstance(o.detail.const, str) else ""
                enabled = o.enabled
                if enabled is not False:
                    casts.append((item.context_expr, dtype))
        entered = [ip.call_function(g.entry, g.args, g.kwargs, g.site.node, self_v=g.self_v) for g in cm.of(GenCtxObj)]
        users = _user_contexts(cm)
        if not cm.objs and nodes.accumulates(item.context_expr):
            _enter_accumulation(ip, item.context_expr)
        if users:
            entered.append(_call_each(ip, users, "__enter__", [], item.context_expr))
            exits.append((users, item.context_expr))
        if item.optional_vars is not None:
            bound = join_all(entered) if entered else cm if not cm.of(CtxObj) else UNKNOWN
            ip.assign(item.optional_vars, bound, env, stmt)
    if not casts:
        return ip.exec_block(stmt.body, env)
    # under no_grad (in any order of the items) the region records no graph. Otherwise what
    # it computes with gradient is tagged (a latent risk): the region trains when a tagged
    # value reaches a backward (build.py keeps its event then), or when backward runs inside
    # it; a validation pass through a frozen model or an unseen pipeline does neither
    region = CastRegion(RiskRec("autocast", Site(ip.st.sf, casts[0][0]), "", SUSPICIOUS, ip.st.ctx, True))
    ip.st.casts.append(region)
    try:
        return ip.exec_block(stmt.body, env)
    finally:
        ip.st.casts.pop()
        if ip.st.nograd is None and (region.carried or region.backward):
            for node, dtype in casts:
                ip.event(EventKind.AUTOCAST, node, None if region.backward else region.tag, detail=dtype)


def _enter_accumulation(ip: Core, node) -> None:
    """The block runs once per micro-batch; the optimizer's step() and zero_grad() (and a prepared
    scheduler's step) in it take effect only on the micro-batch that syncs the gradients, every
    `gradient_accumulation_steps`: the engine runs them under a condition that changes from one
    iteration to the next, as an accumulation counter's `if`, which `if accelerator.sync_gradients:`
    is too. (accelerate's `backward()` divides the loss by the accumulation steps itself.)"""
    key = ip.seq()
    loops = ip.st.stack[-1].loops
    ip.st.trace.branch_tests[key] = (node, loops[-1]["node"] if loops else None)
    ip.st.accumulating.append((key, len(ip.st.ctx)))


def enter_context(ip: Core, recv: V, name, args, kwargs, node) -> V | None:
    """`stack.enter_context(torch.no_grad())` on an `ExitStack` (detectron2's inference loop): grad
    mode changes as a `with` item would change it, until the `with` block around it ends (the with
    statement restores grad mode whatever its body did; a function call restores it on return)."""
    if name != "enter_context" or len(args) != 1 or not isinstance(args[0], V):
        return None
    cm = args[0]
    ctxs = cm.of(CtxObj)
    if not ctxs or cm.objs - set(ctxs) or cm.unk or len(ctxs) > 1:
        _nograd_on_one_path(ip, cm, ctxs)
        return None
    return cm if _enter_grad_mode(ip, ctxs[0], node) else None


def _nograd_on_one_path(ip: Core, cm: V, ctxs: list) -> bool:
    """`nullcontext() if model.training else torch.no_grad()`: no_grad on one path only, so grad mode
    is not known (unless no_grad is already on)."""
    if any(o.kind == "nograd" for o in ctxs) and (cm.objs - set(ctxs) or cm.unk or len(ctxs) > 1):
        if ip.st.nograd is None:
            ip.st.grad_known = False
        return True
    return False


def _enter_grad_mode(ip: Core, o: CtxObj, node) -> bool:
    """Grad mode as the context `o` sets it from here (no_grad, enable_grad, set_grad_enabled with a
    flag not known here); False when `o` is not about grad mode (autocast, another context)."""
    if o.kind == "nograd":
        if ip.st.nograd is None:
            ip.st.nograd = Site(ip.st.sf, node)
        return True
    if o.kind == "grad":
        ip.st.nograd, ip.st.grad_known = None, True
        return True
    if o.kind == "other":
        if ip.st.nograd is None:
            ip.st.grad_known = False
        return True
    return False


def note_cast(ip: Core, value: V) -> V:
    """A value made inside autocast regions, tagged with them when it carries gradient."""
    if ip.st.nograd is not None or not _carries_grad(value):
        return value
    for region in ip.st.casts:
        region.carried = True
    return value.replace(risks=value.risks | {r.tag for r in ip.st.casts})


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


def decorate(ip: Core, o: CtxObj, args, kwargs, node, env) -> V:
    """A grad-mode context manager called on a function (`torch.no_grad()(fn)`, what yolov5's
    `@smart_inference_mode()` returns as `torch.inference_mode()(fn)`): the function, run with grad
    off (or on), as under the decorator written in place. A copy: the function itself, called by its
    own name elsewhere, keeps the grad mode of its callers."""
    fns = args[0].of(FuncObj) if len(args) == 1 and not kwargs and isinstance(args[0], V) else []
    if o.kind not in ("nograd", "grad") or len(fns) != 1 or fns[0].entry is not None:
        me = V(Kind.CTX, frozenset((o,)))
        return ip.opaque_call(me, args, kwargs, node, extra=me, outside=True)
    fn = fns[0]
    made = FuncObj(fn.node, fn.scope, fn.closure, fn.qual, fn.cls)
    made.is_static, made.is_classmethod = fn.is_static, fn.is_classmethod
    made.defaults, made.def_env = fn.defaults, fn.def_env
    if o.kind == "nograd":
        made.nograd = o.site
    else:
        made.grad_on = True
    return V(Kind.FUNC, frozenset((made,)))


# ---------------------------------------------------------------- calls that make contexts


def is_grad_enabled(ip: Core, qual, args, kwargs, node, env) -> V:
    if ip.st.nograd is not None:
        return const(False)
    return const(True) if ip.st.grad_known else V(Kind.NUMBER, unk=False)


def no_grad(ip: Core, qual, args, kwargs, node, env) -> V:
    return V(Kind.CTX, frozenset((CtxObj("nograd", Site(ip.st.sf, node)),)))


def enable_grad(ip: Core, qual, args, kwargs, node, env) -> V:
    return V(Kind.CTX, frozenset((CtxObj("grad", Site(ip.st.sf, node)),)))


def set_grad_enabled(ip: Core, qual, args, kwargs, node, env) -> V:
    flag = args[0].const if args and isinstance(args[0], V) else kwargs.get("mode", UNKNOWN).const
    kind = "nograd" if flag is False else "grad" if flag is True else "other"
    return V(Kind.CTX, frozenset((CtxObj(kind, Site(ip.st.sf, node)),)))


def autocast(ip: Core, qual, args, kwargs, node, env) -> V:
    en = kwargs.get("enabled")
    dtype = kwargs.get("dtype", args[1] if len(args) > 1 and not qual.startswith("torch.cuda") else None)
    device = kwargs.get("device_type", args[0] if args and not qual.startswith("torch.cuda") else None)
    if dtype is None and (qual == "torch.cuda.amp.autocast" or (isinstance(device, V) and device.const == "cuda")):
        dtype = V(Kind.MODREF, const="torch.float16")  # the CUDA default
    # `enabled=flag`: a flag known here decides, as the branches on the same flag were decided
    enabled = None
    if isinstance(en, V) and not en.unk and (en.const is None or isinstance(en.const, (bool, int))):
        enabled = bool(en.const)
    return V(Kind.CTX, frozenset((CtxObj("autocast", Site(ip.st.sf, node), dtype, enabled),)))

"""Calls of torch.autograd and gradient clipping: `torch.autograd.grad(...)`,
`torch.autograd.backward(...)`, `clip_grad_norm_(...)`, and a project's own autograd Functions
(`MyFunction.apply(x)`). (`loss.backward()` is a tensor method, tensors.py.) Handlers of the
semantics tables (torch/register.py)."""

from __future__ import annotations

import ast

from ..interp import recording
from ..interp import results as R
from ..interp.core import Core
from ..interp.objects import ClassObj, DictObj, ListObj, PartialObj, Site, SymObj, TensorObj
from ..interp.trace import Cut, EventKind, SaveRec
from ..interp.values import EMPTY, NONE, UNKNOWN, Kind, Mark, QualRef, Star, V, flow_of, make_tuple
from ..ops import torch_api as T
from .optimizers import param_set


def grad(ip: Core, qual, args, kwargs, node, env) -> V:
    outputs = args[0] if args else kwargs.get("outputs", UNKNOWN)
    inputs = args[1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
    loss_node = node.args[0] if node.args else None
    recording.do_backward(
        ip,
        _as_loss(outputs),
        node,
        kind=EventKind.GRAD,
        inputs=inputs,
        loss_node=loss_node,
        kwargs=kwargs,
        gradient=len(args) > 2 or "grad_outputs" in kwargs,
    )
    create = kwargs.get("create_graph")
    if create is not None and create.const is not False:
        f = flow_of(outputs)
        # the gradients hold the double-backward graph, which keeps what the forward saved alive
        # (GA303); not as saves of their own that a proof could use (GA110, GA302 follow the
        # forward's graph itself)
        kept = frozenset(SaveRec(s.storage, s.version, s.site, s.op, s.ctx, False, s.path) for s in f.saves)
        # a network's gradient (a gradient penalty's, a path length's) is the zero vector only where
        # the network is flat in what it is taken against: dense, as a biased layer's output
        return V(
            Kind.TUPLE | Kind.TENSOR, EMPTY, f.org, f.weak, f.top, f.cuts, kept, site=node, unk=f.unk, marks=Mark.DENSE
        )
    # without create_graph the gradients are plain tensors: what they were computed from reaches
    # nothing through them (a penalty made of them and added to the loss trains nothing, GA112)
    f = flow_of(outputs)
    made = V(Kind.TUPLE | Kind.TENSOR, frozenset((TensorObj(Site(ip.st.sf, node)),)), f.org, f.weak, f.top, site=node)
    return R.make_cut(ip, Cut.NONDIFF, made, node, "torch.autograd.grad")


def backward(ip: Core, qual, args, kwargs, node, env) -> V:
    loss = args[0] if args else kwargs.get("tensors", UNKNOWN)
    recording.do_backward(
        ip,
        _as_loss(loss),
        node,
        loss_node=node.args[0] if node.args else None,
        kwargs=kwargs,
        gradient=len(args) > 1 or "grad_tensors" in kwargs,
    )
    return NONE


def is_clip(qual: str, head: str, short: str) -> bool:
    return short in T.CLIP_FUNCTIONS and ("torch.nn.utils" in head or head.endswith(("utils", "clip_grad")))


def clip(ip: Core, qual, args, kwargs, node, env) -> V:
    short = qual.rpartition(".")[2]
    units = frozenset(param_set(ip, args[0])[0]) if args and isinstance(args[0], V) else None
    ip.event(EventKind.CLIP, node, None, detail=short, units=units)
    return V(Kind.TENSOR, frozenset((TensorObj(Site(ip.st.sf, node)),)), site=node)


def _as_loss(v) -> V:
    """What torch.autograd.backward/grad differentiate: a tensor, or the tensors of a sequence."""
    if not isinstance(v, V):
        return UNKNOWN
    if any(isinstance(o, (ListObj, DictObj)) for o in v.objs):
        return flow_of(v).value()
    return v


# checkpoint's own options, not the function's arguments
_CHECKPOINT_OPTIONS = frozenset(("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug"))


def checkpoint(ip: Core, qual, args, kwargs, node, env) -> V | None:
    """`torch.utils.checkpoint.checkpoint(fn, *args)`: the values and gradients of `fn(*args)` (the
    forward is run again in backward instead of kept); `checkpoint_sequential(functions, segments,
    x)`: `functions(x)`. Unseen, every activation-checkpointed block lost its graph."""
    if not args or isinstance(args[0], Star):
        return None
    if qual.endswith("checkpoint_sequential"):
        return ip.call_value(args[0], list(args[2:3]), {}, node, env) if len(args) > 2 else None
    rest = {k: v for k, v in kwargs.items() if k not in _CHECKPOINT_OPTIONS}
    return ip.call_value(args[0], list(args[1:]), rest, node, env)


# the bases of a custom autograd operation (torch/autograd/function.py)
FUNCTION_BASES = frozenset(
    ("torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction")
)
FUNCTION_APPLY = "torch.autograd.Function.apply"


def function_attr(ip: Core, cls: ClassObj, attr: str, node) -> V | None:
    """`MyFunction.apply` of a project's torch.autograd.Function subclass: calling it runs
    `MyFunction.forward(ctx, *args)` (function_apply)."""
    if attr != "apply" or not any(b in FUNCTION_BASES for c in cls.mro() for b in c.bases if isinstance(b, str)):
        return None
    apply = V(Kind.FUNC, frozenset((QualRef.of(FUNCTION_APPLY),)))
    call = PartialObj(apply, [V(Kind.CLASS, frozenset((cls,)))], {})
    return V(Kind.FUNC, frozenset((call,)))


def function_apply(ip: Core, qual, args, kwargs, node, env) -> V | None:
    """`MyFunction.apply(*inputs)`: `forward` runs with autograd recording nothing (its ops save
    nothing, their zero gradients are not the result's), and each output's gradient flows to the
    inputs `backward` returns a gradient for: a surrogate gradient through a spike's step function
    (SNNs), a straight-through estimator, a gradient reversal layer."""
    classes = args[0].of(ClassObj) if args and isinstance(args[0], V) else []
    if len(classes) != 1:
        return None
    cls, inputs = classes[0], list(args[1:])
    out = UNKNOWN
    forward = cls.lookup("forward")
    if forward is not None and not any(isinstance(a, Star) for a in inputs):
        ctx = V(Kind.UNKNOWN, frozenset((SymObj("ctx", Site(ip.st.sf, node), ip.seq()),)))
        outer = ip.st.nograd
        ip.st.nograd = outer or Site(ip.st.sf, node)
        try:
            out = ip.call_function(forward, [ctx, *inputs], {}, node)
        finally:
            ip.st.nograd = outer
    graded = _gradients_returned(cls)
    carried = [
        (a.value if isinstance(a, Star) else a)
        for i, a in enumerate(inputs)
        if isinstance(a, Star) or graded is None or i >= len(graded) or graded[i]
    ]
    f = flow_of(*[v for v in carried if isinstance(v, V)])

    def output(v) -> V:
        return ip.tensor_result(f, node, shape=v.shape if isinstance(v, V) else None)

    if out.items is not None:
        return make_tuple([output(v) for v in out.items], node)
    return output(out)


def _gradients_returned(cls: ClassObj) -> list[bool] | None:
    """For each input of `forward` after ctx, whether `backward` can return a gradient for it
    (False where every return gives a literal None there); None when that is not known."""
    backward = cls.lookup("backward")
    if backward is None or not isinstance(backward.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    rows: list[list[bool]] = []
    todo: list[ast.AST] = list(backward.node.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Return):
            value = n.value
            if isinstance(value, ast.Tuple):
                rows.append([not (isinstance(e, ast.Constant) and e.value is None) for e in value.elts])
            elif value is not None and not isinstance(value, ast.Name):
                rows.append([not (isinstance(value, ast.Constant) and value.value is None)])
            else:
                return None  # a name (a tuple built elsewhere): not known
            continue
        todo.extend(ast.iter_child_nodes(n))
    if not rows:
        return None
    width = max(len(r) for r in rows)
    return [any(i >= len(r) or r[i] for r in rows) for i in range(width)]

"""PyTorch tensor semantics: ops, methods, attributes, factories, NumPy, and where gradient is cut.

Handlers of the semantics tables (torch/register.py): `torch.*` and `torch.nn.functional.*`
calls, tensor methods and attributes, operators on tensors. What ops save for backward and which
cut the graph comes from the op tables generated from torch's own YAML (ops/, through torch_api).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..interp import recording
from ..interp import results as R
from ..interp import shapes as S
from ..interp.core import Core
from ..interp.frames import PathRaises
from ..interp.objects import FROZEN, TRAINABLE, ListObj, PIter, Site, TensorObj, Unit, is_closed, storages
from ..interp.operators import scales
from ..interp.trace import Cut, EventKind, InplaceRec, NonLeafRec, SaveRec
from ..interp.values import (
    EMPTY,
    NOCONST,
    NONE,
    UNKNOWN,
    Fact,
    Kind,
    Mark,
    Star,
    V,
    const,
    flow_of,
    make_tuple,
    requires_grad,
    surely_requires_grad,
)
from ..ops import torch_api as T
from . import leaves, numeric_ops, numerics
from .numerics import NUMERIC_MARKS as N_MARKS


def tensor_attr(ip: Core, recv: V, attr, node) -> V:
    if attr == "grad":
        recording.note_grad_read(ip, recv, node)
        units = frozenset(o for o in recv.objs if isinstance(o, Unit))
        base = frozenset(o.base for o in recv.objs if isinstance(o, TensorObj) and getattr(o, "base", None))
        return V(Kind.TENSOR, frozenset((TensorObj(Site(ip.st.sf, node)),)), grads=units | base, site=node)
    if attr == "data":
        out = R.make_cut(ip, Cut.DATA, recv, node, ".data", receiver=node.value if hasattr(node, "value") else None)
        # one view per leaf it may be (`for t in target.parameters(): t.data.copy_(...)` changes each)
        views = []
        for u in (o for o in recv.objs if isinstance(o, Unit)):
            view = TensorObj(Site(ip.st.sf, node))
            view.base = u
            views.append(view)
        if not views:
            views.append(TensorObj(Site(ip.st.sf, node)))
        # (the `.data` of a `.grad` is that gradient still: `p.grad.data.zero_()` clears it)
        return out.replace(objs=frozenset(views), saves=EMPTY, grads=recv.grads)
    if attr == "requires_grad":
        leaves_of = [o for o in recv.objs if isinstance(o, Unit)]
        if leaves_of and len(recv.objs - {o for o in recv.objs if isinstance(o, PIter)}) == len(leaves_of):
            states = {u.frozen for u in leaves_of}
            if states == {FROZEN}:
                return const(False)
            if states == {TRAINABLE} and all(u.kind != Unit.OPAQUE or is_closed(u) for u in leaves_of):
                return const(True)
            return V(Kind.NUMBER)
        if recv.facts & Fact.NOGRAD:
            return const(False)  # made under no_grad, detached, or from tensors that need no grad
        if any(isinstance(o, PIter) and not o.exact for o in recv.objs):
            # a parameter of a model the engine cannot see (`for n, p in model.named_parameters():
            # if not p.requires_grad: continue`): frozen or not, it cannot tell
            return V(Kind.NUMBER, unk=False)
        if any(u.frozen != FROZEN for u in recv.org):
            return const(True)
        if recv.k & Kind.TENSOR and not (recv.carries or recv.unk):
            return const(False)
        return V(Kind.NUMBER, unk=False)
    if attr in T.VIEW_ATTRIBUTES:
        return ip.tensor_result(flow_of(recv), node, alias=recv)
    if attr in T.METADATA_ATTRIBUTES:
        return V(Kind.NUMBER | Kind.UNKNOWN, site=node, unk=False)  # never gradient
    return V(Kind.UNKNOWN, site=node)


def tensor_binop(ip: Core, op, left: V, right: V, node) -> V:
    """`a * b`, `x @ w`, `loss / n` where an operand is a tensor."""
    opname = {
        ast.Mult: "mul",
        ast.MatMult: "matmul",
        ast.Div: "div",
        ast.Pow: "pow",
        ast.FloorDiv: "floor_divide",
    }.get(type(op))
    if isinstance(op, (ast.Mult, ast.Div)):
        # `log_prob * advantage.detach()`: a stop-gradient on a factor is a weight, not a break
        _tag_cuts(right, left, "weight")
        if isinstance(op, ast.Mult):
            _tag_cuts(left, right, "weight")
    elif isinstance(op, (ast.Add, ast.Sub)):
        _dead_terms(ip, left, right)
    f = flow_of(left, right)
    ls, rs = _shape(left), _shape(right)
    if isinstance(op, (ast.Mult, ast.Div)):
        # `loss.detach() * opt.beta`: a factor not known as a tensor (a setting) scales, and keeps
        # the tensor's shape (were it a tensor of another shape, backward() would refuse the loss)
        if ls is None and rs is not None and not left.k & Kind.TENSOR:
            ls = ()
        elif rs is None and ls is not None and not right.k & Kind.TENSOR:
            rs = ()
    shape = S.matmul(ls, rs) if isinstance(op, ast.MatMult) else S.broadcast(ls, rs)
    out = ip.tensor_result(f, node, op=opname, inputs=(left, right), shape=shape)
    if scales(op, left, right):
        out = out.replace(marks=out.marks | Mark.SCALED)
    if isinstance(op, ast.MatMult):
        return numeric_ops.numeric(ip, "matmul", (left, right), node, out)
    arith = _ARITH.get(type(op))
    return numeric_ops.arith_numeric(ip, arith, left, right, node, out) if arith else out


def _restart(ip: Core, target: V) -> None:
    """`w.data.uniform_(-k, k)`, `b.data.zero_()`: the parameters it refills start over, as with
    nn.init (an optimizer built after it in a loop iteration is a fresh run's)."""
    units = set()
    for s in storages(target):
        base = s if isinstance(s, Unit) else getattr(s, "base", None)
        if isinstance(base, Unit) and base.kind == Unit.PARAM:
            units.add(base.oid)
    if units:
        ip.st.trace.resets.append((frozenset(units), ip.seq()))


def _converted_by(s: TensorObj) -> str:
    """The conversion method (`to`, `float`, `contiguous`) whose call made `s`, when it returns a
    fresh CPU leaf itself on a CPU run; "" otherwise."""
    node = s.site.node if s.site is not None else None
    func = node.func if isinstance(node, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else ""
    return name if name in T.SELF_FOR_A_CPU_LEAF else ""


def inplace_update(ip: Core, target: V, rhs: V | None, node, stmt, op, target_node=None) -> V:
    site = Site(ip.st.sf, node)
    if target.marks & Mark.SPLIT_VIEW and ip.st.nograd is None and requires_grad(target):
        # `q, k, v = proj(x).chunk(3, -1)`, then `q *= scale`: torch raises at this statement;
        # certain when a parameter that requires grad flows in and grad mode is known to be on
        # (not in a class checked alone, whose callers are not seen)
        certain = surely_requires_grad(target) and ip.st.grad_known and not ip.st.shallow
        ip.st.trace.split_writes.append((site, certain))
    if op in ("Add", "Sub") and rhs is not None:
        _dead_terms(ip, target, rhs, accumulated=True)  # `loss_g += lambda_mel * l1(mel, mel_fake.data)`
    stores = storages(target)
    group = tuple(s for s in stores if type(s) is TensorObj and s.base is None)
    for s in stores:
        if isinstance(s, Unit):
            # `w[0].detach().zero_()` is allowed: the detached alias does not require grad
            if s.kind in (Unit.PARAM, Unit.LEAF, Unit.INPUT) and s.frozen != FROZEN and s in target.org:
                if ip.st.nograd is None:
                    ip.st.trace.inplace.append(
                        InplaceRec(
                            ip.seq(),
                            InplaceRec.LEAF,
                            site,
                            frozenset((s,)),
                            False,
                            s,
                            s.version,
                            op,
                            ip.st.ctx,
                            stmt,
                        )
                    )
                if rhs is not None and s in rhs.grads:
                    ip.st.trace.manual_updates.append((s, site, ip.seq()))
                    ip.event(EventKind.BY_HAND, node, None, units=frozenset((s,)))
            if op not in T.PROJECTIONS:
                ip.st.trace.writes.append((s, site, ip.st.ctx))
            s.version += 1
            s.bumps.append((s.version, site, tuple(ip.st.path), ()))
        else:
            base = getattr(s, "base", None)
            if base is not None and op not in T.PROJECTIONS:
                ip.st.trace.writes.append((base, site, ip.st.ctx))  # `p.data.copy_(...)` changes p
            if base is not None and rhs is not None and base in rhs.grads:
                ip.st.trace.manual_updates.append((base, site, ip.seq()))
                ip.event(EventKind.BY_HAND, node, None, units=frozenset((base,)))
            leaf = s.nonleaf_of
            through = _converted_by(s) if leaf is not None else ""
            if (
                through
                and ip.st.nograd is None
                and leaf.kind in (Unit.LEAF, Unit.INPUT)
                and leaf.frozen != FROZEN
                and leaf in target.org
            ):
                # `acc = torch.zeros((), requires_grad=True).to(device)`, then `acc += loss`: on the
                # CPU (or in that dtype already) the conversion returned the leaf itself, and torch
                # raises there as for the leaf
                rec = InplaceRec(
                    ip.seq(), InplaceRec.LEAF, site, frozenset((leaf,)), False, leaf, leaf.version, op, ip.st.ctx, stmt
                )
                rec.through = through
                ip.st.trace.inplace.append(rec)
            if s.nonleaf_of is not None and recording.reads_own_grad(ip, s):
                ip.st.trace.nonleaf.append(NonLeafRec(s.site, Site(ip.st.sf, stmt), s.nonleaf_of, "update", ip.st.ctx))
            if base is None:
                s.version += 1
                # the tensors the target may be (`x = relu(y) if i < n else y`): which one changed
                # is not known, only that one of them did
                s.bumps.append((s.version, site, tuple(ip.st.path), group))
    f = flow_of(target) if rhs is None else flow_of(target, rhs)
    # a tensor the engine knows no storage of (an argument, an unseen call's result) is changed
    # all the same: the result is that tensor, one storage from here on
    fresh = None if stores else TensorObj(site)
    new_saves = f.saves
    if ip.st.nograd is None and f.carries and op in T.SAVES_OUTPUT:
        sure = R.live_flow(f)  # certain only when a leaf that certainly requires grad flows in
        new_saves = new_saves | frozenset(
            SaveRec(s, s.version, site, op, ip.st.ctx, sure, path=tuple(ip.st.path))
            for s in (stores or [fresh])
            if isinstance(s, TensorObj)
        )
    if ip.st.nograd is None and f.carries and op in ("mul", "Mult", "imul") and rhs is not None:
        # x *= y saves y (and x's old value is consumed before the change)
        new_saves = new_saves | frozenset(
            SaveRec(s, s.version, site, "mul", ip.st.ctx, path=tuple(ip.st.path))
            for s in storages(rhs)
            if isinstance(s, TensorObj)
        )
    out = V(
        Kind.TENSOR,
        frozenset(stores) if stores else frozenset((fresh,)),
        f.org,
        f.weak,
        f.top,
        f.cuts,
        new_saves,
        target.grads,
        site=node,
        unk=f.unk,
        facts=Fact.NOGRAD if f.nograd else 0,
        terms=f.terms,
        # a hazard written in (`probs[i] = torch.exp(logit)`) is in the tensor from now on, and so is
        # what is known of the values written (an exp of raw activations, a probability)
        risks=f.risks,
        marks=f.marks if rhs is not None and op == "setitem" else target.marks,
    )
    if ip.st.nograd is not None and rhs is not None and rhs.carries:
        out = R.cut_nograd(ip, out, ip.st.nograd)
    return out


_SIGNS = Fact.NONNEG | Fact.POSITIVE | Fact.NONZERO

# the public methods of Python's containers and strings (`items`, `append`, `split`...): Python facts
_CONTAINER_METHODS = frozenset(n for t in (dict, list, set, str) for n in dir(t) if not n.startswith("_"))


def tensor_method(ip: Core, recv: V, name, args, kwargs, node, env) -> V:
    """`x.name(...)` on a tensor: the methods with semantics of their own (TENSOR_METHODS), else what
    the op tables say the method is (a view, a split, a non-differentiable op, in place...)."""
    recv_node = node.func.value if isinstance(node.func, ast.Attribute) else None
    argv = [a for a in args if isinstance(a, V)]
    if name in _MODULE_ONLY and not any(isinstance(o, Unit) for o in recv.objs):
        # no tensor has these: the value is a module the engine did not see being made
        # (`Discriminator(...).cuda()` of a class it could not import)
        return unseen_module_method(ip, name, node)
    if T.no_tensor_has(name):
        if (
            name in _CONTAINER_METHODS
            and recv.k == Kind.TENSOR
            and recv.saves
            and all(isinstance(o, (TensorObj, Unit)) for o in recv.objs)
        ):
            # a dict's, list's or str's method on what is certainly a tensor ops computed with
            # gradient (not an argument of unknown type, not a torch.Generator made as a tensor
            # stand-in, not a DTensor's own `full_tensor()`): the call raises AttributeError and
            # nothing after it runs (`total_loss += loss.items()`, a typo)
            raise PathRaises()
        # no tensor has this method: the value is something else or a subclass (a generator's
        # `manual_seed`, a dict's `items` on a path where a Parameter stands): what it gives keeps
        # what the value carried, and is no tensor an op computed; under no_grad it records no graph
        # (as any call the engine does not follow: calls.opaque_call)
        out = flow_of(recv, *argv).value(Kind.UNKNOWN, site=node)
        return R.cut_nograd(ip, out, ip.st.nograd) if ip.st.nograd is not None and out.carries else out
    own = TENSOR_METHODS.get(name)
    if own is not None:
        return own(ip, recv, name, argv, kwargs, node, env, recv_node)
    if name in T.METADATA_METHODS:
        if recv.marks & Mark.PICKED and name in T.SIZES and not (argv and argv[0].const not in (0, -2)):
            return V(Kind.NUMBER, site=node, marks=Mark.ZERO)  # `torch.nonzero(x).size(0)`: may be 0
        return V(Kind.NUMBER, site=node)
    if name == "float" and not argv and not kwargs and _float32_parameter(ip, recv):
        return recv  # `.float()` of a float32 parameter returns the parameter itself (no copy, a leaf)
    if name in T.ALIAS_METHODS:
        dtype = argv[0].const if argv and isinstance(argv[0].const, str) else None
        kw_dtype = kwargs.get("dtype")
        for d in (dtype, kw_dtype.const if kw_dtype is not None else None):
            if isinstance(d, str) and any(t in d for t in T.INTEGRAL_DTYPE_WORDS):
                return R.nondiff(ip, flow_of(recv), node, f".{name}({d})")
        return numeric_ops.numeric(
            ip,
            name,
            (recv,),
            node,
            # `x.to(y)`, `x.type_as(y)`: y gives a dtype and a device, no values (derivatives: other=n)
            ip.tensor_result(flow_of(recv), node, alias=recv, shape=recv.shape),
        )
    if name == "clone":
        return numeric_ops.numeric(ip, name, (recv,), node, ip.tensor_result(flow_of(recv), node, shape=recv.shape))
    if name in T.VIEW_OPS:
        return numeric_ops.numeric(
            ip,
            name,
            (recv,),
            node,
            ip.tensor_result(flow_of(recv), node, alias=recv, shape=op_shape(name, recv, argv, kwargs)),
        )
    if name in T.SPLIT_OPS:
        out = ip.tensor_result(flow_of(recv), node, alias=recv)
        # the parts are views of the receiver's values: what holds of all of them holds of each
        out = numeric_ops.numeric(ip, name, (recv,), node, out)
        # (only of what certainly is a tensor: `name.split("/")` of a value of unknown type is a str's)
        split = Mark.SPLIT_VIEW if recv.k == Kind.TENSOR else 0
        return out.replace(k=Kind.TENSOR | Kind.TUPLE, marks=out.marks | split)
    if name in T.ZERO_GRAD_OPS:
        return R.zerograd(ip, flow_of(recv), node, f".{name}()", recv_node)
    if name == "unique" and (kwargs.get("return_inverse") or kwargs.get("return_counts")):
        return _unique(ip, recv, kwargs, node, f".{name}()")
    if name in T.NONDIFF_OPS:
        out = _counted(name, recv, R.nondiff(ip, flow_of(recv, *argv), node, f".{name}()"))
        return out.replace(marks=out.marks | Mark.NAN_TEST) if name in T.NAN_TESTS else out
    if name in T.REWRAP and (argv or "data" in kwargs):
        # `out.new_tensor(out)`: a copy of the data, as torch.tensor(out) makes (the receiver gives
        # only its dtype and device)
        return factory(ip, name, argv, kwargs, node, detail=f".{name}()")
    if name in T.NEW_TENSOR_METHODS:
        positive = Fact.POSITIVE if _positive_factory(name, argv, kwargs) else 0  # `m.new_full((n, 1), 1)`
        return V(Kind.TENSOR, frozenset((TensorObj(Site(ip.st.sf, node)),)), site=node, facts=positive)
    if name in T.GRAD_CLEARING and recv.grads and not recv.carries:
        # `w.grad.zero_()` (after `w.grad.detach_()`): the gradient is cleared by hand
        units = frozenset(recv.grads)
        ip.event(EventKind.ZERO_GRAD, node, None, detail=f".grad.{name}()", units=units)
        if name == "detach_":
            return recv
    if name in T.GRAD_FILLING and recv.grads and not recv.carries and argv:
        # `p.grad.add_(g)`: a gradient computed elsewhere (a hypergradient, a hand-made estimate) is
        # given to p, whatever the backward() of its own step reaches
        ip.st.trace.grad_writes.extend(recv.grads)
    if name.endswith("_") and not name.startswith("_") and name not in T.NOT_INPLACE:
        skip = T.INPLACE_NONDIFF_ARGS.get(name, ())
        # `out.scatter_reduce_(dim, index, src)`: only src's gradient flows into out (an index
        # that the engine cannot tell from a float does not make the op save anything)
        given = (
            [a for i, a in enumerate(argv) if i not in skip]
            if skip and not any(isinstance(a, Star) for a in argv)
            else argv
        )
        rhs = flow_of(*given).value() if given else None
        if name in ("copy_",) and argv:
            rhs = argv[0]
        out = inplace_update(ip, recv, rhs, node, node, op=name[:-1], target_node=recv_node)
        if name in T.REFILLS:
            _restart(ip, recv)
        if name[:-1] in T.SCATTER_SUMS and len(argv) > 2:
            numeric_ops.scatter_rows(recv, argv[1], out)
        if name == "masked_fill_":
            # `dots.masked_fill_(~mask, -inf)`: what it holds now may be a row of -inf (GA406)
            out = numeric_ops.numeric(ip, name, (recv, *argv), node, out, kwargs)
        elif name == "fill_" and argv and numerics.positive_const(argv[0].const):
            # `m.new(n, 1).fill_(1)`: every element is now that number
            out = out.replace(marks=out.marks & ~numerics.RISKY, facts=out.facts | Fact.POSITIVE)
        elif name[:-1] in T.CLAMPS:
            # `deg.clamp_(min=1)`: the values are clamped as by `clamp` (no longer 0 for a divisor)
            out = numeric_ops.numeric(ip, name[:-1], (recv, *argv), node, out, kwargs)
        # `h.mul_(g)` changes what `h` holds: later reads see g's flow and the saves the op made
        if isinstance(recv_node, ast.Name) and env is not None and recv_node.id in env:
            env[recv_node.id] = out
        return out
    if (
        name in T.VALUES_INDICES
        and (argv or "dim" in kwargs)
        and not (name in T.BINARY_VALUES_INDICES and argv and argv[0].k & Kind.TENSOR)
    ):
        values = numeric_ops.numeric(
            ip,
            name,
            (recv,),
            node,
            ip.tensor_result(flow_of(recv), node, op=name, inputs=(recv,), shape=op_shape(name, recv, argv, kwargs)),
        )
        indices = R.nondiff(ip, flow_of(recv), node, f".{name}().indices")
        t = make_tuple([values, indices], node)
        return t.replace(k=Kind.TUPLE | Kind.TENSOR)
    out = ip.tensor_result(
        flow_of(recv, *argv), node, op=name, inputs=(recv, *argv), shape=op_shape(name, recv, argv, kwargs)
    )
    out = numeric_ops.numeric(ip, name, (recv, *argv), node, out, kwargs)
    if name == "gather":
        out = picked(out, argv[1] if len(argv) > 1 else kwargs.get("index"))
    return out


# ---------------------------------------------------------------- tensor methods with their own semantics
# (ip, recv, name, argv, kwargs, node, env, recv_node) -> V


def _backward(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    recording.do_backward(
        ip, recv, node, loss_node=recv_node, kwargs=kwargs, gradient=bool(argv) or "gradient" in kwargs
    )
    return NONE


def _detach(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    out = R.make_cut(ip, Cut.DETACH, recv, node, ".detach()", receiver=recv_node)
    return out.replace(saves=EMPTY)


def _detach_(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    if requires_grad(recv):
        # detaching a computed tensor in place changes what an op that saved it as an input reads
        # at backward (torch raises "Trying to use a saved tensor that has been detached in-place");
        # one that saved it as its own output rebuilds it (build.py tells the two apart)
        site = Site(ip.st.sf, node)
        for s in storages(recv):
            if type(s) is TensorObj and s.base is None:
                s.version += 1
                s.bumps.append((s.version, site, tuple(ip.st.path), ()))
    out = R.make_cut(ip, Cut.DETACH, recv, node, ".detach_()", receiver=recv_node).replace(saves=EMPTY)
    if isinstance(recv_node, ast.Name) and env is not None:
        env[recv_node.id] = out
    return out


def _to_python(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    """`.item()`, `.tolist()`: a Python value, which carries no gradient."""
    k = Kind.NUMBER if name == "item" else Kind.LIST
    _acted(recv)
    if recv.carries:
        return R.scalar_cut(ip, recv, node, f".{name}()", k=k, receiver=recv_node)
    # the number is the tensor's element: a count that can be 0 stays one (`mask.sum().item()`)
    return V(
        k,
        cuts=recv.cuts,
        site=node,
        marks=recv.marks & (Mark.SAMPLED | Mark.ZERO),
        facts=recv.facts & (Fact.NONNEG | Fact.POSITIVE | Fact.NONZERO),
    )


def _numpy(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    return numpy_of(ip, recv, node, recv_node)


def _requires_grad(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    flag = argv[0].const if argv else kwargs.get("requires_grad", const(True)).const
    return leaves.set_requires_grad(ip, recv, flag if isinstance(flag, bool) else None, node, recv_node, env, None)


def _retain_grad(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    for o in recv.objs:
        if isinstance(o, TensorObj):
            o.retained = True
    return NONE


def _no_effect(ip: Core, recv: V, name, argv, kwargs, node, env, recv_node) -> V:
    """Hooks: nothing the engine follows."""
    return NONE


TENSOR_METHODS: dict[str, Callable[..., V]] = {
    "backward": _backward,
    "detach": _detach,
    "detach_": _detach_,
    **dict.fromkeys(T.TO_PYTHON, _to_python),
    "numpy": _numpy,
    "requires_grad_": _requires_grad,
    "retain_grad": _retain_grad,
    "register_hook": _no_effect,
    "register_post_accumulate_grad_hook": _no_effect,
}


def _acted(v: V) -> None:
    """A draw made a Python number or an array (`env.step(action.item())`): an action handed to code
    that acts on it, whose returns reach a loss by design (GA112 does not report the draw)."""
    for c in v.cuts:
        if c.kind == Cut.SAMPLE:
            c.note = "action"


def numpy_of(ip: Core, recv: V, node, recv_node) -> V:
    """`.numpy()`: one GA105 cut, absorbing a `.detach()`/`.data` in the same chain."""
    _acted(recv)
    chain = set()
    n = recv_node
    while isinstance(n, (ast.Call, ast.Attribute)):
        chain.add(id(n))
        n = (
            n.func.value
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            else (n.value if isinstance(n, ast.Attribute) else None)
        )
    absorbed = [c for c in recv.cuts if c.kind in (Cut.DETACH, Cut.DATA) and id(c.site.node) in chain]
    org, weak = set(recv.org), set(recv.weak)
    for c in absorbed:
        org |= c.removed
        weak |= c.removed_weak
    base = recv.replace(cuts=recv.cuts - frozenset(absorbed), org=frozenset(org), weak=frozenset(weak))
    out = R.make_cut(ip, Cut.NUMPY, base, node, ".numpy()", receiver=recv_node, result_k=Kind.ARRAY)
    return out.replace(objs=EMPTY, saves=EMPTY)


def numpy_call(ip: Core, short, args, kwargs, node) -> V:
    vals = [a for a in args if isinstance(a, V)] + [v for k, v in kwargs.items() if k != "**"]
    tensors = [v for v in vals if v.k & Kind.TENSOR and v.carries]
    if tensors:
        f = flow_of(*vals)
        return R.make_cut(ip, Cut.NUMPY, f.value(Kind.ARRAY), node, f"np.{short}()", result_k=Kind.ARRAY)
    f = flow_of(*vals)
    marks = f.marks & Mark.SAMPLED
    if short == "choice" and "p" in kwargs:
        marks |= Mark.SAMPLED  # np.random.choice(n, p=probs): an action drawn from the policy
    return V(Kind.ARRAY | Kind.NUMBER, cuts=f.cuts, site=node, marks=marks)


def _counted(name: str, x, out: V) -> V:
    """What an integer result of `x` says of counts: the rows a selection picked (`nonzero`: how
    many may be none, Mark.PICKED), or `bincount` of the inverse indices of `torch.unique`, each
    count >= 1."""
    if name in T.SELECTIONS:
        return out.replace(marks=out.marks | Mark.PICKED)
    if name == "bincount" and isinstance(x, V) and x.marks & Mark.COVERS:
        return out.replace(marks=out.marks & ~Mark.ZERO, facts=out.facts | Fact.POSITIVE | Fact.NONNEG)
    return out


def _unique(ip: Core, x: V, kwargs: dict, node, detail: str) -> V:
    """`torch.unique(x, return_inverse=True, return_counts=True)`: the values, then (when asked) the
    inverse indices, which take every value 0 .. n - 1 (Mark.COVERS: `bincount` of them is >= 1), and
    the counts, each >= 1."""
    parts = [R.nondiff(ip, flow_of(x), node, detail)]
    for key in ("return_inverse", "return_counts"):
        flag = kwargs.get(key)
        if isinstance(flag, V) and flag.const is True:
            v = R.nondiff(ip, flow_of(x), node, detail)
            if key == "return_inverse":
                parts.append(v.replace(marks=v.marks | Mark.COVERS))
            else:
                parts.append(v.replace(marks=v.marks & ~Mark.ZERO, facts=v.facts | Fact.POSITIVE))
        elif flag is not None and not (isinstance(flag, V) and flag.const is False):
            return R.nondiff(ip, flow_of(x), node, detail)  # which parts there are is not known
    return make_tuple(parts, node).replace(k=Kind.TUPLE | Kind.TENSOR) if len(parts) > 1 else parts[0]


def torch_function(ip: Core, short, args, kwargs, node, env) -> V:
    out = _torch_function(ip, short, args, kwargs, node, env)
    if short == "multinomial":
        out = out.replace(marks=out.marks | Mark.SAMPLED)  # categories drawn with their probabilities
    return out


def _torch_function(ip: Core, short, args, kwargs, node, env) -> V:
    argv = [a.value if isinstance(a, Star) else a for a in args]
    argv = [a for a in argv if isinstance(a, V)]
    if short in T.FACTORIES:
        return factory(ip, short, argv, kwargs, node)
    if short in T.TENSOR_LIST_OPS:
        elems = [
            ip.iter_value(a) if not (a.k & Kind.TENSOR and not a.objs - set(storages(a))) or a.items is not None else a
            for a in argv[:1]
        ] + argv[1:]
        parts = [e for e in elems if e is not None]
        out = numeric_ops.numeric(ip, "cat", parts, node, ip.tensor_result(flow_of(*parts), node))
        dim = kwargs.get("dim", argv[1] if len(argv) > 1 else None)
        if short in T.CONCATENATIONS and argv and _kept_row(argv[0], dim):
            out = out.replace(marks=out.marks | Mark.CAUSAL)
        return out
    if short in T.GRAD_MODE_NAMES:
        return ip.call_qualified(f"torch.{short}", args, kwargs, node, env)
    if short in T.PROCESS_FUNCTIONS:
        if short == "compile" and argv:
            return argv[0]
        return NONE
    if short in T.VIEW_OPS and argv:
        return numeric_ops.numeric(
            ip,
            short,
            argv,
            node,
            ip.tensor_result(flow_of(*argv), node, alias=argv[0], shape=op_shape(short, argv[0], argv[1:], kwargs)),
        )
    if short in T.SPLIT_OPS and argv:
        out = numeric_ops.numeric(ip, short, argv[:1], node, ip.tensor_result(flow_of(argv[0]), node, alias=argv[0]))
        split = Mark.SPLIT_VIEW if argv[0].k == Kind.TENSOR else 0
        return out.replace(k=Kind.TENSOR | Kind.TUPLE, marks=out.marks | split)
    if short in T.ZERO_GRAD_OPS and argv:
        return R.zerograd(ip, flow_of(argv[0]), node, f"torch.{short}()", node.args[0] if node.args else None)
    if short == "unique" and argv and (kwargs.get("return_inverse") or kwargs.get("return_counts")):
        return _unique(ip, argv[0], kwargs, node, "torch.unique()")
    if short in T.NONDIFF_OPS:
        out = _counted(short, argv[0] if argv else None, R.nondiff(ip, flow_of(*argv), node, f"torch.{short}()"))
        if short in T.NAN_TESTS:
            out = out.replace(marks=out.marks | Mark.NAN_TEST)
        if short in T.DATA_RANGE_COUNTS and _data_range(argv, kwargs):
            # every element counted: a sum of the counts is >= 1 (CAUSAL: each reduction keeps one)
            out = out.replace(marks=out.marks | Mark.CAUSAL)
        return out
    if short in T.VALUES_INDICES and len(argv) >= 2 and not argv[1].k & Kind.TENSOR:
        values = ip.tensor_result(flow_of(argv[0]), node, op=short, inputs=(argv[0],))
        return make_tuple([values, R.nondiff(ip, flow_of(argv[0]), node, f"torch.{short}().indices")], node).replace(
            k=Kind.TUPLE | Kind.TENSOR
        )
    if short.endswith("_") and argv and short not in T.NOT_INPLACE:
        if short.startswith("_foreach_"):
            # `torch._foreach_lerp_(targets, params, w)`: each tensor of the first list changes in place
            argv = [ip.iter_value(a) if a.objs and not a.k & Kind.TENSOR else a for a in argv]
        return inplace_update(
            ip,
            argv[0],
            flow_of(*argv[1:]).value() if len(argv) > 1 else None,
            node,
            node,
            op=short[:-1],
            target_node=node.args[0] if node.args else None,
        )
    out_kw = kwargs.get("out")
    if short == "where" and len(argv) == 3:
        out = ip.tensor_result(
            flow_of(argv[1], argv[2]),
            node,
            op="where",
            inputs=(argv[1], argv[2]),
            shape=S.broadcast(_shape(argv[0]), S.broadcast(_shape(argv[1]), _shape(argv[2]))),
        )
        both = (argv[1].marks | argv[2].marks) & N_MARKS
        numeric_ops.gate_where(argv[0], argv[1], argv[2], out)
        risks = numeric_ops.where_hazards(ip, node, argv[0], env) if out.carries else EMPTY
        clean = 0
        if argv[0].marks & Mark.NAN_TEST:
            # `torch.where(torch.isnan(loss), 0, loss)`: the NaN replaced after the fact
            dropped, clean = numeric_ops.drop_nan(ip, out, argv[1:3], "torch.where", node.args[1:3])
            risks = risks | dropped
        positive = argv[1].facts & argv[2].facts & Fact.POSITIVE
        if argv[0].marks & Mark.ZMASK and (numerics.positive_const(argv[1].const) or argv[1].facts & Fact.POSITIVE):
            # `torch.where(n < 1e-6, 1, n)`, `torch.where(n < 1e-5, torch.ones_like(n), n)`: a positive
            # value wherever n is (near) 0
            positive, both = Fact.POSITIVE, both & ~numerics.RISKY
        return out.replace(marks=out.marks | both, risks=out.risks | risks, facts=out.facts | positive | clean)
    res = ip.tensor_result(
        flow_of(*argv),
        node,
        op=short,
        inputs=tuple(argv),
        shape=op_shape(short, argv[0], argv[1:], kwargs) if argv else None,
    )
    res = numeric_ops.numeric(ip, short, argv, node, res, kwargs)
    if short == "gather":
        res = picked(res, argv[2] if len(argv) > 2 else kwargs.get("index"))
    if out_kw is not None:
        inplace_update(ip, out_kw, res, node, node, op=short, target_node=None)
    return res


def _data_range(argv, kwargs) -> bool:
    """`torch.histc(x, bins, min, max)` with min == max == 0 (the defaults): the data's own range."""
    bounds = [
        kwargs.get("min", argv[2] if len(argv) > 2 else None),
        kwargs.get("max", argv[3] if len(argv) > 3 else None),
    ]
    return all(b is None or (isinstance(b, V) and b.const == 0) for b in bounds)


def _literal(v: V) -> bool:
    """A number or a (nested) list of numbers written in the code: an initial value, not data."""
    if v.const is not NOCONST:
        return True
    return v.items is not None and all(isinstance(i, V) and _literal(i) for i in v.items)


def factory(ip: Core, short, argv, kwargs, node, detail: str | None = None) -> V:
    site = Site(ip.st.sf, node)
    rg = kwargs.get("requires_grad")
    wants_grad = rg is not None and rg.const is True
    data = argv[0] if argv else kwargs.get("data")
    cuts = EMPTY
    if short in T.REWRAP and data is not None:
        f = flow_of(data)
        if f.carries:
            v = R.make_cut(
                ip,
                Cut.REWRAP,
                f.value(),
                node,
                detail or f"torch.{short}()",
                receiver=node.args[0] if node.args else None,
            )
            if data.k & (Kind.LIST | Kind.TUPLE) or data.items is not None:
                for c in v.cuts - f.cuts:
                    c.note = "list"
            cuts = v.cuts
        else:
            cuts = f.cuts
    elif short in T.SHARING_FACTORIES and data is not None:
        if short == "as_tensor" and data.k & Kind.TENSOR and data.carries:
            return data
        cuts = flow_of(data).cuts
    elif short in T.LIKE_FACTORIES:
        cuts = EMPTY
    shape = _factory_shape(short, argv, kwargs)
    dtype = numeric_ops.dtype_facts(short, [], kwargs, 0)  # `dtype=torch.float64`
    # `torch.tensor(n_tokens)`: the values copied keep what is known of them (a count that can be 0)
    copied = isinstance(data, V) and (short in T.REWRAP or short in T.SHARING_FACTORIES)
    if wants_grad:
        u = Unit(Unit.LEAF, "<tensor>", site, ip.seq(), count=1)
        u.source_cuts = frozenset(c for c in cuts if c.removed or c.removed_weak)
        u.computed = bool(u.source_cuts)
        if u.computed:
            u.kind = Unit.FRESH
        u.data = data is not None and not _literal(data)
        leaves.note_new_units(ip, [u], node)
        return V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)), cuts=cuts, site=node, shape=shape, facts=dtype)
    return V(
        Kind.TENSOR,
        frozenset((TensorObj(site),)),
        cuts=cuts,
        site=node,
        shape=shape,
        facts=Fact.NOGRAD
        | dtype
        | (Fact.POSITIVE if _positive_factory(short, argv, kwargs) else 0)
        | (Fact.NONZERO if short == "eye" else 0)
        | (data.facts & _SIGNS if copied else 0),
        marks=(Mark.CAUSAL if short in T.MASK_BUILDERS else 0)
        | (Mark.RANGE if short == "arange" else 0)
        | (flow_of(data).marks & Mark.SAMPLED if data else 0)
        | (data.marks & Mark.ZERO if copied else 0),
    )


def functional(ip: Core, short, args, kwargs, node, env) -> V:
    argv = [a for a in args if isinstance(a, V)]
    if "dropout" in short and argv and zero_rate(argv[1:2], kwargs):
        return argv[0]  # torch returns the input itself when p is 0 (in place or not)
    inplace = kwargs.get("inplace")
    if (inplace is not None and inplace.const is True) or short.endswith("_"):
        x = argv[0] if argv else UNKNOWN
        return inplace_update(
            ip, x, None, node, node, op=short.rstrip("_"), target_node=node.args[0] if node.args else None
        )
    if short in T.F_PLAIN_FLOW:
        if short == "one_hot":
            # integer in, no gradient out; it keeps the cuts of its indices (one_hot(logits.argmax())
            # is where the scorer's only path to the loss ended, GA112)
            return V(
                Kind.TENSOR,
                frozenset((TensorObj(Site(ip.st.sf, node)),)),
                site=node,
                marks=Mark.ZERO,
                facts=Fact.NOGRAD,
                cuts=flow_of(*argv[:1]).cuts,
            )
        if short == "embedding" and len(argv) > 1:
            return ip.tensor_result(flow_of(argv[1]), node)
        return ip.tensor_result(
            flow_of(*argv), node, shape=argv[0].shape if argv and short.startswith("dropout") else None
        )
    flow = flow_of(
        *argv, *[v for k, v in kwargs.items() if k not in ("**",) and isinstance(v, V) and v.k & Kind.TENSOR]
    )
    # the table's losses, and by their name those it does not map (triplet_margin_with_distance_loss)
    if short in T.LOSS_FUNCTIONS or short.endswith("_loss"):
        inputs = argv + [kwargs[k] for k in ("input", "target") if k in kwargs]
        red = kwargs.get("reduction")
        out = ip.tensor_result(
            flow,
            node,
            op=short,
            inputs=tuple(argv),
            reduced=True,
            shape=loss_shape(short, red.const if isinstance(red, V) else "mean", inputs),
        )
        if isinstance(red, V) and red.const == "none":
            out = numeric_ops.unreduced_loss(short, inputs, out.replace(facts=out.facts | Fact.UNREDUCED))
        misuse = numeric_ops.loss_misuse(ip, short, inputs, node, node.args[0] if node.args else None)
        if misuse:
            out = out.replace(risks=out.risks | misuse)
        out = numeric_ops.loss_reads(ip, short, inputs, node, out)
        recording.note_regression(ip, short, inputs)
        return recording.loss_value(ip, out, inputs, f"F.{short}")
    out = ip.tensor_result(
        flow, node, op=short, inputs=tuple(argv), shape=op_shape(short, argv[0], argv[1:], kwargs) if argv else None
    )
    return numeric_ops.numeric(ip, short, argv, node, out, kwargs)


def negate(ip: Core, v: V, node) -> V:
    """`-x` on a tensor."""
    return numeric_ops.numeric(ip, "neg", (v,), node, ip.tensor_result(flow_of(v), node, op="neg", shape=v.shape))


def getitem(ip: Core, recv: V, key, node, index: V | None = None) -> V:
    """`x[i]`, `x[:, 0]`: a view of the tensor (`key` is the constant index, or "slice"); indexed
    by a list, an array or a tensor (`x[[0, 2]]`, `x[mask]`), a new tensor."""
    alias = None if _advanced(index) else recv
    out = numeric_ops.numeric(
        ip, "getitem", (recv,), node, ip.tensor_result(flow_of(recv), node, alias=alias, shape=S.index(recv.shape, key))
    )
    if index is not None and index.marks & Mark.NAN_TEST:
        # `loss[~torch.isnan(loss)]`: the NaN entries dropped after the fact
        dropped, clean = numeric_ops.drop_nan(ip, out, (recv,), "indexing with a NaN test")
        out = out.replace(risks=out.risks | dropped, facts=out.facts | clean)
    return picked(out, index)


def _advanced(index: V | None) -> bool:
    """torch's advanced indexing, which copies: some part of the index is a list, an array or a
    tensor not known to be 0-dim (an integer 0-dim tensor indexes like an int, giving a view)."""
    if index is None:
        return False
    parts = index.items if index.k & Kind.TUPLE and index.items is not None else (index,)
    return any(
        isinstance(p, V) and (p.k & (Kind.LIST | Kind.ARRAY) or (p.k & Kind.TENSOR and p.shape != ())) for p in parts
    )


def picked(out: V, index: V | None) -> V:
    """`probs[a]`, `probs.gather(1, a)` at actions drawn from that policy: each picked category had
    probability > 0 when it was drawn, so its probability is not the one that underflows to 0."""
    if index is None or not index.marks & Mark.SAMPLED or not out.marks & (Mark.PROB | Mark.SIGM):
        return out
    return out.replace(marks=out.marks & ~(Mark.PROB | Mark.SIGM | Mark.ZERO), facts=out.facts | Fact.POSITIVE)


_MODULE_ONLY = frozenset(("parameters", "named_parameters", "zero_grad"))


def unseen_module_method(ip: Core, name, node) -> V:
    """`.parameters()` / `.zero_grad()` of a module the engine cannot see: parameters it cannot
    name (no param group built from them is known exactly), gradients cleared it cannot name."""
    if name == "zero_grad":
        ip.event(EventKind.ZERO_GRAD, node, None, detail="unseen")
        return NONE
    return V(Kind.PARAMS, frozenset((PIter(EMPTY, exact=False, named=name == "named_parameters"),)), site=node)


def unseen_method(ip: Core, recv: V, name, args, kwargs, node) -> V | None:
    """A tensor method called on a value the engine did not see being made (`batch.to(device)`,
    `out.detach()` of a library's output)."""
    if name in _MODULE_ONLY and not recv.objs:
        return unseen_module_method(ip, name, node)
    if name == "backward" and not args and (recv.k & Kind.TENSOR or recv.carries or recv.cuts):
        return tensor_method(ip, recv, name, args, kwargs, node, None)
    if name in T.TO_PYTHON:
        _acted(recv)
        if recv.carries:
            return R.scalar_cut(ip, recv, node, f".{name}()")
        return V(Kind.NUMBER, cuts=recv.cuts, marks=recv.marks & Mark.SAMPLED)
    if name in ("detach",) and (recv.carries or recv.k & Kind.TENSOR):
        return tensor_method(ip, recv, name, args, kwargs, node, None)
    if name == "sample" and not recv.objs:
        if recv.marks & Mark.DIST:
            # torch.distributions draws under no_grad (`rsample` is the differentiable draw): the
            # sample carries no gradient back to the distribution's parameters
            out = R.make_cut(ip, Cut.SAMPLE, recv.replace(k=Kind.TENSOR), node, ".sample()")
            return out.replace(k=Kind.TENSOR, objs=EMPTY, marks=Mark.SAMPLED)
        # a draw from a distribution the engine does not model (a project's own `sample()`)
        out = ip.opaque_call(None, args, kwargs, node, extra=recv, outside=True, record=None)
        return out.replace(marks=out.marks | Mark.SAMPLED)
    if name in _DIFFERENTIABLE_DRAWS and recv.marks & Mark.DIST and not recv.objs:
        # `dist.rsample()`, `dist.log_prob(a)`, `dist.entropy()`: differentiable functions of the
        # distribution's parameters (the reparameterised draw of SAC's actor, a policy's log-probability)
        values = [a for a in list(args) + [v for k, v in kwargs.items() if k != "**"] if isinstance(a, V)]
        out = ip.tensor_result(flow_of(recv, *values), node)
        if name == "log_prob":
            # a policy-gradient term: the REINFORCE estimator is the sum over an episode's steps of
            # log pi(a_t | s_t) * G_t, so a backward() per step and one step() per episode add up to it
            # (not micro-batches whose mean was meant, GA205)
            out = out.replace(marks=out.marks | Mark.SCALED | Mark.LOGP)
        return out
    return None


_DIFFERENTIABLE_DRAWS = frozenset(("rsample", "log_prob", "entropy"))


def distribution(ip: Core, qual, args, kwargs, node, env) -> V:
    """`torch.distributions.Categorical(probs)` and the other distribution classes: an object the
    engine does not model (its `log_prob`, `entropy`... may carry what went in), marked so that its
    `.sample()` is known to carry no gradient."""
    out = ip.opaque_call(None, args, kwargs, node)
    # its parameters (loc and scale, logits) are differentiable inputs of what it computes: their
    # gradient reaches what it computes (`rsample`, `log_prob`, `entropy` below); what their graph saved
    # is not followed through it (a proof of reuse needs more than an object the engine does not model)
    f = flow_of(*[a for a in list(args) + list(kwargs.values()) if isinstance(a, V)])
    family = qual.rpartition(".")[2]
    risks = numeric_ops.distribution_scale(ip, family, args, kwargs, node)
    risks |= numeric_ops.logits_given_probabilities(ip, family, kwargs, node)
    out = out.replace(k=Kind.UNKNOWN, marks=out.marks | Mark.DIST, org=f.org)  # an object
    return out.replace(risks=out.risks | f.risks | frozenset(risks)) if risks or f.risks else out


def unseen_tensor_method(ip: Core, recv: V, name, args, kwargs, node) -> V | None:
    """`x.to(device)`, `batch.view(...)` on data the engine did not see being made."""
    if name in T.TENSORISH_METHODS and not recv.objs:
        return tensor_method(ip, recv.replace(k=recv.k | Kind.TENSOR), name, args, kwargs, node, None)
    return None


# ---------------------------------------------------------------- calls of torch names


def functional_call(ip: Core, qual, args, kwargs, node, env) -> V:
    """`F.softmax(x, -1)`, `torch.nn.functional.cross_entropy(...)`."""
    return functional(ip, qual.rpartition(".")[2], args, kwargs, node, env)


def torch_call(ip: Core, qual, args, kwargs, node, env) -> V:
    """`torch.cat(...)`, `torch.linalg.norm(...)`, `torch.randn(...)`."""
    return torch_function(ip, qual.rpartition(".")[2], args, kwargs, node, env)


def numpy_function(ip: Core, qual, args, kwargs, node, env) -> V:
    return numpy_call(ip, qual.rpartition(".")[2], args, kwargs, node)


_ARITH = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}


def _dead_terms(ip: Core, left: V, right: V, accumulated: bool = False) -> None:
    """`l1 + w * perceptual.detach().item()`: a scalar term (a loss) cut from everything it carried,
    added to one that carries gradient, is a constant there: it only shifts the loss's value. (Not a
    tensor's shift: `code + (q - code).detach()` is a straight-through estimator, `x - x.mean().item()`
    centres.) `accumulated`: `total += term`, the way losses are summed (`loss_g += lambda_mel *
    loss_mel`), where the total's shape may not be known (a project loss module's sum)."""
    ls, rs = _single(_shape(left)), _single(_shape(right))
    if rs == () and (ls == () or (accumulated and ls is None)):
        dead = _tag_cuts(right, left, "dead") + (_tag_cuts(left, right, "dead") if ls == () else [])
    else:
        return
    if dead and ip.st.shallow:
        ip.st.trace.dead_cuts.extend(dead)  # in a unit run alone (interpreter.run_units)


def _tag_cuts(v: V, other: V, role: str) -> list:
    """Mark the cuts that only `v` brings where it meets `other`, which carries gradient of its own;
    the ones marked now. A leaf made from what a cut left (`torch.tensor(out, requires_grad=True)`,
    `out.detach().requires_grad_()`) carries no parameter's gradient: the term is as dead."""
    tagged = []
    if v.cuts and _carries_params(other) and not _carries_params(v):
        for c in v.cuts - other.cuts:
            if not c.role:
                c.role = role
                tagged.append(c)
    return tagged


def _carries_params(v: V) -> bool:
    """May carry gradient from something other than a frozen parameter (a frozen teacher's output)
    or a leaf made from a cut value (whose gradient stops at that leaf: it trains nothing upstream)."""
    if v.weak or v.top:
        return True
    return any(u.frozen != FROZEN and not (isinstance(u, Unit) and u.kind == Unit.FRESH and u.computed) for u in v.org)


def _single(shape):
    """A shape of one element (`(1,)`: MPL's moving baseline made with `torch.empty(1)`) as a scalar's:
    a loss term of that shape is one number, and backward() takes it."""
    if shape and all(d == 1 for d in shape):
        return ()
    return shape


def _shape(v: V):
    """A value's shape for broadcasting: a Python number is a 0-dim operand."""
    if v.k & Kind.TENSOR:
        return v.shape
    if v.k & Kind.NUMBER and not v.k & (Kind.LIST | Kind.TUPLE | Kind.ARRAY):
        return ()
    return None


def _int(v):
    c = v.const if isinstance(v, V) else None
    return c if isinstance(c, int) and not isinstance(c, bool) else None


def _ints(values):
    """Constant ints given as `f(2, 3)` or `f((2, 3))`, or None."""
    if len(values) == 1 and isinstance(values[0], V) and values[0].items is not None:
        values = list(values[0].items)
    if len(values) == 1 and isinstance(values[0], V) and isinstance(values[0].const, tuple):
        values = [const(c) for c in values[0].const]
    out = [_int(v) for v in values]
    return tuple(out) if out and all(x is not None for x in out) else None


def op_shape(name, x: V, argv, kwargs):
    """The result shape of a tensor op `x.name(*argv, **kwargs)` (or `torch.name(x, ...)`)."""
    xs = x.shape if isinstance(x, V) else None
    if name in T.REDUCTIONS:
        # where dim and keepdim are (norm(p, dim, keepdim)); else dim first, keepdim by keyword
        dpos, kpos = T.DIM_ARGS.get(name, (0, None))
        at = argv[dpos] if dpos is not None and len(argv) > dpos else None
        dim = kwargs.get("dim") if "dim" in kwargs else (at if at is not None and not at.k & Kind.TENSOR else None)
        keep = kwargs.get("keepdim", argv[kpos] if kpos is not None and len(argv) > kpos else None)
        keepdim = keep.const if isinstance(keep, V) else False
        if dim is None:
            return S.reduce(xs)
        d = _int(dim)
        if d is None and dim.items is not None:
            ds = tuple(_int(i) for i in dim.items)
            d = ds if all(i is not None for i in ds) else None
        return S.reduce(xs, d, keepdim, has_dim=True) if d is not None else None
    if name in T.ELEMENTWISE:
        out = xs
        for a in argv[:2]:
            if a.k & (Kind.TENSOR | Kind.NUMBER):
                out = S.broadcast(out, _shape(a))
        return out
    if name in T.RESHAPES or name == "expand":
        sizes = _ints(argv)
        return S.view(xs, list(sizes)) if sizes is not None and name in T.RESHAPES else (sizes if sizes else None)
    if name == "squeeze":
        d = kwargs.get("dim", argv[0] if argv else None)
        return S.squeeze(xs, _int(d), has_dim=d is not None)
    if name == "unsqueeze":
        d = kwargs.get("dim", argv[0] if argv else None)
        return S.unsqueeze(xs, _int(d))
    if name == "flatten":
        if argv or kwargs:
            return None
        if xs is None:
            return None
        if S.known(xs):
            n = 1
            for s in xs:
                n *= s
            return (n,)
        return (None,)
    if name in ("t",) and xs is not None and len(xs) == 2:
        return (xs[1], xs[0])
    if name in T.MATRIX_PRODUCTS and argv:
        return S.matmul(xs, _shape(argv[0]))
    return None


def _factory_shape(short, argv, kwargs):
    """`torch.randn(32, 4)`, `torch.zeros((2, 3))`, `torch.randint(0, 5, (8,))`, `x.zeros_like()`..."""
    if "size" in kwargs:
        return _ints([kwargs["size"]])
    if short.endswith("_like") and argv:
        return argv[0].shape
    if short in T.SIZED_FACTORIES:
        return _ints(argv)
    if short == "full" and argv:
        return _ints(argv[:1])
    if short in ("randint",) and len(argv) >= 2:
        return _ints(argv[-1:])
    if short == "eye" and argv:
        n = _int(argv[0])
        m = _int(argv[1]) if len(argv) > 1 else n
        return (n, m) if n is not None and m is not None else None
    if short == "arange" and argv:
        ends = [_int(a) for a in argv[:2]]
        if all(e is not None for e in ends) and len(argv) <= 2:
            return (max(0, ends[0]),) if len(ends) == 1 else (max(0, ends[1] - ends[0]),)
    if short in T.DATA_FACTORIES and argv:
        lists = argv[0].of(ListObj)
        if len(lists) == 1 and lists[0].elems is not None and all(e.k == Kind.NUMBER for e in lists[0].elems):
            return (len(lists[0].elems),)
        if argv[0].k == Kind.NUMBER:
            return ()
        if argv[0].k & Kind.TENSOR and not argv[0].k & (Kind.LIST | Kind.TUPLE):
            return argv[0].shape  # `torch.tensor(t)`: a copy of the tensor, of its shape
    return None


def loss_shape(op, reduction, inputs):
    """A loss function's result: a scalar when it reduces, else per element (per sample for the
    class losses, whose target drops the class dimension)."""
    if reduction in T.REDUCING_MODES:
        return ()
    if reduction != "none" or len(inputs) < 2 or not isinstance(inputs[0], V) or not isinstance(inputs[1], V):
        return None
    if op in T.CLASS_LOSSES:
        x = inputs[0].shape
        return (x[:1] + x[2:]) if x is not None and len(x) >= 2 else None
    a, b = inputs[0].shape, inputs[1].shape
    return a if a == b else S.broadcast(a, b)


def _float32_parameter(ip: Core, v: V) -> bool:
    """An `nn.Parameter` made in torch's default float32: no float64 default, no dtype given where
    it was made and no conversion there (`nn.Parameter(torch.ones(d, device=dev))`)."""
    units = [o for o in v.objs if isinstance(o, Unit)]
    if not units or ip.st.default_f64 or v.facts & (Fact.F64 | Fact.F32) or len(units) != len(v.objs):
        return False
    for u in units:
        node = u.site.node if u.kind == Unit.PARAM and u.site is not None else None
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "Parameter") and not (
            isinstance(func, ast.Name) and func.id == "Parameter"
        ):
            return False  # a layer's weight: the module's .half() may have converted it since
        for n in ast.walk(node):
            if isinstance(n, ast.keyword) and n.arg == "dtype":
                return False
            if isinstance(n, ast.Attribute) and n.attr in T.ALIAS_METHODS | T.TO_FLOAT64 and n.attr != "float":
                return False  # `.half()`, `.double()`, `.to(...)` where it was made
    return True


def _kept_row(seq: V, dim) -> bool:
    """`cat([ones(n, 1), mask[:, :-1]], 1)`: joined along a dim other than 0, a part > 0 beside parts
    that are >= 0 (masks, counts) keeps an element > 0 in every row, so a sum along it is >= 1 (as
    for a causal mask). Along dim 0 the positive part is only some rows."""
    d = dim.const if isinstance(dim, V) else None
    lists = seq.of(ListObj)
    elems = seq.items if seq.items is not None else (lists[0].elems or ()) if len(lists) == 1 else ()
    tensors = [e for e in elems if isinstance(e, V)]
    if not isinstance(d, int) or isinstance(d, bool) or d == 0 or len(tensors) < 2:
        return False
    if not any(p.facts & Fact.POSITIVE for p in tensors):
        return False
    return all(p.facts & Fact.POSITIVE or (p.marks & numerics.RISKY and not p.marks & Mark.LOGITS) for p in tensors)


def _positive_factory(short, argv, kwargs) -> bool:
    """`torch.ones(...)`, `torch.full(size, 2.0)`, `torch.tensor([1.0, 2.0, 0.5])`: certainly > 0."""
    if short in T.ONES_FACTORIES:
        return True
    if short in T.FILLED_FACTORIES:
        fill = kwargs.get("fill_value", argv[1] if len(argv) > 1 else None)
        return isinstance(fill, V) and isinstance(fill.const, (int, float)) and fill.const > 0
    if short in T.DATA_FACTORIES and argv:
        lists = argv[0].of(ListObj)
        if len(lists) == 1 and lists[0].elems:
            return all(
                isinstance(e.const, (int, float)) and not isinstance(e.const, bool) and e.const > 0
                for e in lists[0].elems
            )
        c = argv[0].const
        return isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0
    return False


def zero_rate(positional: list, kwargs: dict) -> bool:
    """A dropout's rate `p` (its first argument after the input, or `p=`) is the constant 0: torch
    then gives back its input itself, unchanged (`nn.Dropout(p=0.0)`, a config's default rate), so an
    in-place write to the result writes the input."""
    p = kwargs.get("p", positional[0] if positional else None)
    c = p.const if isinstance(p, V) else p
    return type(c) in (int, float) and c == 0

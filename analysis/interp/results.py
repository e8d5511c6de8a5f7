"""Making abstract tensor results and cuts: the core service every op handler uses.

`tensor_result` gives the value of an op's result from the flow of its inputs, recording what the
op's backward saves (an operand of a product, the output of a softmax...); `make_cut` and its
variants drop gradient where a detach, `.data`, `.item()`, a non-differentiable op or `no_grad`
cuts it, remembering which leaves lost their path (the evidence GA1xx findings cite).
"""

from __future__ import annotations

from ..ops import torch_api as T
from . import shapes as S
from .objects import FROZEN, Site, TensorObj, Unit, storages
from .trace import Cut, SaveRec
from .values import EMPTY, NOCONST, Fact, Flow, Kind, Mark, V, requires_grad, surely_requires_grad


def tensor_result(
    ip, f: Flow, node, op=None, inputs=(), alias=None, k=Kind.TENSOR, shape=None, reduced=False, label=None
) -> V:
    """`label`: the name the saves get for messages when it is not `op` (a layer saving its input
    as a linear map does, named for the functional it runs)."""
    site = Site(ip.st.sf, node)
    leaf = _leaf_of(alias) if alias is not None else next((u for u in map(_leaf_of, inputs) if u), None)
    if alias is not None and leaf is None:
        objs = frozenset(storages(alias))
        storage = None
        if not objs:
            storage = TensorObj(site)
            objs = frozenset((storage,))
    else:
        storage = TensorObj(site)
        objs = frozenset((storage,))
        # an op applied to a leaf made with requires_grad=True: the result is not a leaf (GA113)
        storage.nonleaf_of = leaf
    saves = f.saves
    if op is not None and ip.st.nograd is None and f.carries and not f.nograd:
        saves = _record_saves(ip, op, f, inputs, storage, site, saves, label or op)
    nograd = ip.st.nograd is not None or f.nograd
    facts = Fact.NOGRAD if nograd else 0
    if f.unreduced and not reduced and op not in S.REDUCTIONS:
        facts |= Fact.UNREDUCED
    v = V(
        k,
        objs,
        f.org,
        f.weak,
        f.top,
        f.cuts,
        saves,
        f.grads,
        site=node,
        unk=f.unk,
        facts=facts,
        terms=f.terms,
        shape=shape,
        marks=f.marks & (Mark.SCALED | Mark.SAMPLED),
        risks=f.risks,
    )
    if ip.st.nograd is not None and v.carries:
        v = cut_nograd(ip, v, ip.st.nograd)
    return v


def _record_saves(ip, op, f, inputs, out_storage, site, saves, label):
    """What the op's backward keeps: an operand is saved when the other one requires grad. A save
    is `certain` when that requirement is (a parameter that certainly requires grad flows in), not
    just possible through code the engine did not see; proofs (GA110, GA301...) use certain ones."""
    ctx = ip.st.ctx
    path = tuple(ip.st.path)

    def of(v, sure):
        # computed tensors and parameter leaves alike: the graph node keeps both (GA110 reads
        # the computed ones; a step() that changes a saved parameter matters to GA302/GA304).
        # (one of several distinct tensors, Mark.ONE_OF: which one was saved is not known)
        sure = sure and not v.marks & Mark.ONE_OF
        return [SaveRec(s, s.version, site, label, ctx, sure, path) for s in storages(v)]

    def need(*vs):
        if any(surely_requires_grad(v) for v in vs):
            return 2
        return 1 if any(requires_grad(v) for v in vs) else 0

    new = []
    if op in T.SAVES_OUTPUT and out_storage is not None:
        new.append(SaveRec(out_storage, 0, site, label, ctx, live_flow(f), path))
    if op in T.PRODUCTS and len(inputs) >= 2:
        a, b = inputs[0], inputs[1]
        if isinstance(a, V) and isinstance(b, V):
            if need(b):
                new.extend(of(a, need(b) == 2))
            if need(a):
                new.extend(of(b, need(a) == 2))
    elif op in T.DIVISIONS and len(inputs) >= 2:
        a, b = inputs[0], inputs[1]
        if isinstance(a, V) and isinstance(b, V):
            if need(a, b):
                new.extend(of(b, need(a, b) == 2))
            if need(b):
                new.extend(of(a, need(b) == 2))
    elif op in T.SAVES_INPUT and op not in T.SAVE_NOTHING and inputs:
        a = inputs[0]
        if isinstance(a, V) and need(a):
            new.extend(of(a, need(a) == 2))
    if new:
        saves = saves | frozenset(new)
    return saves


def make_cut(ip, kind, v: V, node, detail, receiver=None, site=None, result_k=None) -> V:
    """Drop `v`'s gradient at `node`; the cut remembers which leaves lost their path."""
    k = result_k if result_k is not None else v.k
    # whatever went in, what comes out requires no grad (and so can hide no unseen gradient)
    facts = v.facts | Fact.NOGRAD
    marks = v.marks & ~(Mark.GRAPH | Mark.HOLDS_GRAPH)  # a backpropagated loss's `.detach()` holds no graph
    if not v.carries:
        return v.replace(k=k, site=node, items=None, const=NOCONST, unk=False, facts=facts, terms=EMPTY, marks=marks)
    cut = Cut(kind, site or Site(ip.st.sf, node), v.org, v.weak, detail, receiver)
    cut.top = v.top
    cut.terms = v.terms
    return v.replace(
        k=k,
        org=EMPTY,
        weak=EMPTY,
        top=False,
        saves=EMPTY,  # a value cut from the graph keeps none of it alive (argmax, .item(), no_grad)
        cuts=v.cuts | {cut},
        site=node,
        items=None,
        const=NOCONST,
        unk=False,
        facts=facts,
        terms=EMPTY,
        marks=marks,
    )


def cut_nograd(ip, v: V, site: Site) -> V:
    return make_cut(ip, Cut.NOGRAD, v, site.node, "no_grad", site=site)


def nondiff(ip, f: Flow, node, detail, compared=()) -> V:
    v = f.value(Kind.TENSOR, site=node)
    out = make_cut(ip, Cut.NONDIFF, v, node, detail)
    storage = TensorObj(Site(ip.st.sf, node))
    if compared:
        storage.compared = frozenset(s for c in compared for s in storages(c))
    # an integer or boolean result: a mask or a count, exactly 0 somewhere (a causal mask stays one);
    # it holds no inf or NaN (a comparison with NaN is False), so no numerical hazard goes on in it
    return out.replace(
        objs=frozenset((storage,)),
        marks=(f.marks & (Mark.CAUSAL | Mark.RANGE | Mark.NAN_TEST)) | Mark.ZERO,
        risks=frozenset(),
    )


def zerograd(ip, f: Flow, node, detail, receiver=None) -> V:
    """round/floor/sign...: the graph goes on and backward() runs, but the gradient through it is
    zero: what it was computed from never changes (GA112)."""
    v = f.value(Kind.TENSOR, site=node)
    storage = TensorObj(Site(ip.st.sf, node))
    if not v.carries or ip.st.nograd is not None:
        return v.replace(objs=frozenset((storage,)), marks=0)
    cut = Cut(Cut.ZEROGRAD, Site(ip.st.sf, node), v.org, v.weak, detail, receiver)
    cut.top = v.top
    cut.terms = v.terms
    return v.replace(
        objs=frozenset((storage,)),
        org=EMPTY,
        weak=EMPTY,
        top=False,
        cuts=v.cuts | {cut},
        terms=EMPTY,
        marks=0,
        facts=0,
    )


def scalar_cut(ip, v: V, node, detail, k=Kind.NUMBER, receiver=None) -> V:
    out = make_cut(ip, Cut.SCALAR, v, node, detail, receiver=receiver, result_k=k)
    return out.replace(objs=EMPTY, saves=EMPTY)


def live_flow(f: Flow) -> bool:
    """A leaf that certainly requires grad flows in (not a value the engine did not see made, which
    may not require grad: then backward records nothing)."""
    return any(u.frozen != FROZEN for u in f.org)


def _leaf_of(v) -> Unit | None:
    """The leaf a value is, when it is exactly one tensor made with requires_grad=True, at creation or
    later (`Variable(t, requires_grad=True)`, `t.requires_grad_()`), or a parameter no module holds;
    not a module's parameter: moving those is nn.Module.to's business."""
    if not isinstance(v, V) or len(v.objs) != 1:
        return None
    u = next(iter(v.objs))
    if not isinstance(u, Unit) or v.org != frozenset((u,)):
        return None
    if u.frozen == FROZEN:
        # `nn.Parameter(t, requires_grad=False).to(device)`: it requires no grad, so the op's result is
        # a plain tensor like any other (running statistics kept by hand), not a weight cut off
        return None
    # a parameter no module holds yet (`nn.Parameter(t).squeeze()`) is a plain leaf too
    return u if u.kind in (Unit.LEAF, Unit.INPUT) or (u.kind == Unit.PARAM and u.owner is None) else None

"""Leaves and requires_grad: parameters and leaf tensors made, frozen and unfrozen (a module's
parameters through `requires_grad_(False)` or `p.requires_grad = False`, in a helper or a branch),
fresh leaves made to require grad, and the record of parameters made after an optimizer (GA108).
"""

from __future__ import annotations

import ast

from ..interp import results as R
from ..interp.core import Core
from ..interp.objects import FROZEN, MAYBE, TRAINABLE, ModuleObj, PIter, Site, Unit, freezable, merge_state
from ..interp.trace import Cut, FreezeRec, InplaceRec, UnitNew
from ..interp.values import EMPTY, UNKNOWN, Kind, V
from ..ops import torch_api as T


def set_requires_grad(ip: Core, recv: V, flag, node, target_node, env, stmt) -> V:
    # `p.detach()` / `p.data` alias p's storage but are new tensors: requires_grad set on them
    # makes a new leaf (or nothing) and leaves p as it was (checked with torch)
    aliased = {u for c in recv.cuts if c.kind in (Cut.DETACH, Cut.DATA) for u in c.removed} - recv.org
    units = [o for o in recv.objs if isinstance(o, Unit) and freezable(o) and o not in aliased]
    if units:
        freeze(ip, units, flag, node, recv)
        if flag is False and isinstance(target_node, ast.Name) and env is not None:
            # `out.requires_grad = False`: on this path the leaf the name holds no longer requires
            # grad, even where the freeze is only one path's (under a setting) or one of several
            # leaves': an in-place write through the name that follows is allowed
            gone = frozenset(units)
            env[target_node.id] = recv.replace(org=recv.org - gone, weak=recv.weak - gone)
        return recv
    if flag is False or not (recv.k & Kind.TENSOR):
        return recv
    if recv.org or recv.weak or recv.top:
        return recv  # a non-leaf: torch refuses the change; nothing new to track
    # a fresh leaf: requires_grad set on a tensor with no history (GA106)
    u = Unit(Unit.FRESH, _target_label(target_node), Site(ip.st.sf, node), ip.seq())
    u.source_cuts = frozenset(c for c in recv.cuts if c.removed or c.removed_weak)
    u.computed = bool(u.source_cuts)
    cuts = recv.cuts
    again = releaf(ip, recv)
    if again is not None:
        # the leaf updated by hand under no_grad (`x = x + a * x.grad`) made a leaf again: the
        # next pass of an input optimisation (adversarial attack, guided sampling), not a stand-in;
        # the cuts of that update dropped nothing the new leaf does not stand for
        kind, update_cuts = again
        u.kind, u.computed, u.source_cuts = kind, False, EMPTY
        cuts = cuts - update_cuts
    elif not u.computed:
        # made from data: a leaf that requires grad, not necessarily a weight; made by a module's
        # __init__ (`w = torch.Tensor(d); w.requires_grad = True; self.mask_emb = w`), it is one
        u.kind = Unit.LEAF if ip.st.init_stack else Unit.INPUT
    u.created_in_loop = any(c[0] == "loop" for c in ip.st.ctx)
    new = V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)), cuts=cuts, site=node)
    if isinstance(target_node, ast.Name) and env is not None:
        env[target_node.id] = new
    elif isinstance(target_node, ast.Attribute) and isinstance(target_node.value, (ast.Name, ast.Attribute)):
        # `self.log_alpha.requires_grad = True`: the attribute now holds the leaf (SAC's temperature,
        # trained by an optimizer of its own)
        if env is not None:
            ip.assign(target_node, new, env, stmt)
    return new


def variable(ip: Core, qual, args, kwargs, node, env) -> V:
    """`Variable(t)` is `t`; `Variable(t, requires_grad=True)` makes it a leaf that requires grad;
    `volatile=True` (inference, before torch 0.4) records no graph."""
    data = args[0] if args and isinstance(args[0], V) else kwargs.get("data")
    if not isinstance(data, V):
        return UNKNOWN
    rg = kwargs.get("requires_grad", args[1] if len(args) > 1 else None)
    if isinstance(rg, V) and rg.const is True:
        if data.org or data.weak or data.top:
            # a tensor with history: the wrapper is a new leaf, detached from it (`Variable(
            # torch.clamp(x_adv, 0, 1), requires_grad=True)` at the end of an attack step; checked
            # with torch: is_leaf, not the same tensor)
            data = R.make_cut(ip, Cut.DETACH, data, node, "Variable(...)").replace(saves=EMPTY)
        return set_requires_grad(ip, data, True, node, None, env, None)
    return data


def releaf(ip: Core, recv: V):
    """When `recv` descends from a leaf's rebinding by hand (`x = x - lr * x.grad`): marks those
    rebindings as made leaves again and returns (the kind for the new leaf, the rebindings' cuts),
    else None."""
    kinds: set[str] = set()
    cuts: set[Cut] = set()
    for rec in ip.st.trace.inplace:
        if rec.kind == InplaceRec.REBIND and (rec.units & recv.grads or rec.cuts & recv.cuts):
            rec.releafed = True
            kinds |= {u.kind for u in rec.units}
            cuts |= rec.cuts
    if not kinds:
        return None
    return (Unit.INPUT if Unit.INPUT in kinds else Unit.LEAF), frozenset(cuts)


def freeze(ip: Core, units, flag, node, recv: V):
    # certain outside conditions, and for leaves made after the innermost condition began (a
    # module built and frozen in the same branch is frozen wherever it exists)
    strong = ip.st.cond == 0 or (bool(ip.st.cond_starts) and all(u.seq > ip.st.cond_starts[-1] for u in units))
    site = Site(ip.st.sf, node)
    targets = set()
    for o in recv.objs:
        if isinstance(o, PIter):
            targets |= set(o.sources)
        elif isinstance(o, ModuleObj):
            targets.add(o)
    if not targets:
        targets = set(units)
    anchor = rise(ip, site, targets)
    for u in units:
        new = TRAINABLE if flag else FROZEN
        if flag is None:
            u.frozen = MAYBE
        elif strong:
            u.frozen = new
        else:
            u.frozen = merge_state(u.frozen, new)
    if flag is not None:
        ip.st.trace.freezes.append(
            FreezeRec(ip.seq(), frozenset(units), site, anchor, bool(flag), strong, ip.st.ctx, frozenset(targets))
        )


def rise(ip: Core, site: Site, targets) -> Site:
    """Report a change made by a helper at the call that handed it the object it changed."""
    anchor = site
    for frame in reversed(ip.st.stack):
        if frame.call_site is None or not frame.arg_objs:
            break
        if any(t in frame.arg_objs for t in targets):
            anchor = frame.call_site
        else:
            break
    return anchor


def _in_forward(ip: Core) -> bool:
    """Running inside a `forward` method (called once per batch by whatever trains the model)."""
    return any(f.runs("forward") for f in ip.st.stack)


def _module_built_in_forward(ip: Core) -> Site | None:
    """Inside the `__init__` of a module the innermost forward constructs (not a forward run by an
    `__init__`, a dummy input building lazy layers): the construction's call in that forward."""
    stack = ip.st.stack
    fwd = max((i for i, f in enumerate(stack) if f.runs("forward")), default=-1)
    if fwd < 0 or fwd + 1 >= len(stack):
        return None
    inner = stack[fwd + 1]
    if inner.func is None or getattr(inner.func.node, "name", "") != "__init__" or inner.call_site is None:
        return None
    return inner.call_site


def _lazy_guard(test) -> bool:
    """`key not in self.cache`, `self.layer is None`, `not hasattr(self, "head")`, `not self.built`:
    a test that a layer kept on the object does not exist yet (alone or as a part of an `and`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_lazy_guard(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        t = test.operand
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "hasattr":
            return True
        return isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        on_self = any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(test))
        if isinstance(op, ast.NotIn) and on_self:
            return True
        if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None and on_self:
            return True
    return False


def _built_once(ip: Core, node) -> bool:
    """The statement building a layer, or a call on the way to it, runs only under a lazy guard of
    its function: the layer is built on the first call and kept (CUT's `create_mlp`)."""
    places = [ip.st.cur_stmt if ip.st.cur_stmt is not None else node]
    places += [c[1] for c in ip.st.ctx if c[0] == "call"]
    funcs = [f.func.node for f in ip.st.stack if f.func is not None and hasattr(f.func.node, "body")]
    for fn in funcs:
        for n in ast.walk(fn):
            if isinstance(n, ast.If) and _lazy_guard(n.test):
                lo, hi = n.body[0].lineno, n.body[-1].end_lineno or n.body[-1].lineno
                lines = [line for p in places if (line := getattr(p, "lineno", 0))]
                if any(lo <= line <= hi and fn.lineno <= line <= (fn.end_lineno or fn.lineno) for line in lines):
                    return True
    return False


def note_new_units(ip: Core, units, node):
    if not units:
        return
    in_loop = any(c[0] == "loop" for c in ip.st.ctx)
    forward = not in_loop and _in_forward(ip)
    for u in units:
        # a plain tensor made with requires_grad=True in a forward (a loss accumulator started at
        # zero) is made anew at every call, as in a loop: never a weight an optimizer forgot
        u.created_in_loop = in_loop or (forward and u.kind in (Unit.LEAF, Unit.INPUT))
        u.in_init = bool(ip.st.init_stack)
    built_in = _module_built_in_forward(ip) if ip.st.shallow and forward and ip.st.init_stack else None
    if ip.st.shallow and forward and (not ip.st.init_stack or built_in is not None):
        # a layer built inside a forward run alone (interpreter.run_units): built anew at each call,
        # unless a guard builds it once and keeps it (`if key not in self.mlps:`); a module of the
        # file built there (matgl's Set2Set readout) is anchored at its construction in the forward
        # (a frozen one, `nn.Parameter(self.pe, requires_grad=False)`, is a constant: no weight to train)
        params = frozenset(u for u in units if u.kind == Unit.PARAM and u.frozen != FROZEN)
        if params and not _built_once(ip, node):
            if built_in is not None:
                site = built_in
            else:
                site = Site(ip.st.sf, ip.st.cur_stmt if ip.st.cur_stmt is not None else node)
            ip.st.trace.forward_new.append((site, params))
    root = ip.st.ctx[:1]
    if any(o.ctx[:1] == root for o in ip.st.trace.optimizers):
        stmt = ip.st.cur_stmt if ip.st.cur_stmt is not None else node
        ip.st.trace.new_units.append(UnitNew(ip.seq(), Site(ip.st.sf, stmt), frozenset(units), ip.st.ctx, in_loop))


def _target_label(node) -> str:
    """A name for a leaf made by `requires_grad`: the variable or attribute it was set on."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return "<tensor>"


def note_model_inputs(args, node) -> None:
    """Data made a leaf that requires grad (`x = torch.tensor(feats, requires_grad=True)`) and given
    to a model as its input, itself or moved (`model(x.cuda())`): the input a saliency map or an
    attack differentiates with respect to, not a weight an optimizer forgot (GA108). A leaf that
    reaches the model through a computation (`model(x @ w)`) is used as a weight."""
    given = getattr(node, "args", None) or []
    for a, n in zip(args, given):
        if not isinstance(a, V) or isinstance(n, ast.Starred):
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in T.MAY_RETURN_SELF:
            objs = [getattr(o, "nonleaf_of", None) for o in a.objs]
        elif isinstance(n, ast.Name):
            objs = list(a.objs)
        else:
            continue
        for u in objs:
            if isinstance(u, Unit) and u.kind == Unit.LEAF and u.data and u.owner is None and not u.in_init:
                u.kind = Unit.INPUT

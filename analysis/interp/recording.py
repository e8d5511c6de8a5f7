"""Recording what a training step does, as the interpreter replays it: events (zero_grad, backward,
step, clip...), backward() calls, loss terms, and the graph facts the lifecycle and backward rules
need (state carried across iterations, histories accumulated, where one model's output enters
another's loss, .grad reads of non-leaves). Everything lands in the run's Trace (trace.py).
"""

from __future__ import annotations

import ast

from ..ops import torch_api as T
from .objects import FROZEN, DictObj, InstanceObj, ListObj, ModuleObj, OptimObj, PIter, Site, TensorObj, Unit
from .trace import (
    SUSPICIOUS,
    AccRec,
    BackwardRec,
    CarryRec,
    CrossRec,
    Event,
    EventKind,
    GradReadRec,
    LossRec,
    RiskRec,
    ScoreRec,
    UnseenRec,
)
from .values import Fact, Kind, Mark, Star, V, join

_SYNCED = (EventKind.STEP, EventKind.ZERO_GRAD, EventKind.SCHED_STEP)


def event(ip, kind, node, obj=None, detail=None, units=None):
    path = tuple(ip.st.path)
    guarded = ip.st.cond > 0
    if ip.st.accumulating and kind in _SYNCED:
        # in `with accelerator.accumulate(model):` the prepared optimizer and scheduler act only on
        # the micro-batch that syncs the gradients: as under `if (step + 1) % accum == 0:`
        key, depth = ip.st.accumulating[-1]
        path, guarded = path + ((key, 0, depth),), True
    ev = Event(
        ip.seq(),
        kind,
        Site(ip.st.sf, node),
        ip.st.ctx,
        obj,
        detail,
        guarded=guarded,
        path=path,
        units=units,
    )
    ip.st.trace.events.append(ev)
    return ev


def loss_value(ip, out: V, argv, label) -> V:
    """A loss function's result: its target's stop-gradients are the idiom (role 'target'), and it
    is a loss term whose reaching a backward() GA209 checks."""
    if len(argv) >= 2 and isinstance(argv[0], V) and isinstance(argv[1], V):
        target, pred = argv[1], argv[0]
        # a prediction that is data (no known parameter, no cut of its own: `mel[:, :, :n]`)
        # against a cut of known parameters: the arguments written the other way round, and the
        # cut value is what the loss is taken of, not a target's stop-gradient
        data = not pred.org and not pred.cuts
        for c in target.cuts - pred.cuts:
            if not c.role and not (data and (c.removed or not pred.carries)):
                c.role = "target"
    # a scale inside what it compares (attention's `* head_dim ** -0.5`, logits over a temperature)
    # is not the loss's scale: only `loss / accum_steps` after it averages micro-batches (GA205)
    return note_loss(ip, out.replace(marks=out.marks & ~Mark.SCALED), label, named=False)


def note_loss(ip, v: V, label, named=True) -> V:
    """Record a loss term (GA209): computed with gradient from known leaves, outside no_grad."""
    if not v.org or ip.st.nograd is not None or v.facts & Fact.NOGRAD or (named and v.terms):
        return v
    stmt = ip.st.cur_stmt if ip.st.cur_stmt is not None else v.site
    rec = LossRec(ip.seq(), Site(ip.st.sf, stmt), ip.st.ctx, v.org, v.weak, label, ip.st.stack[-1].label)
    ip.st.trace.losses.append(rec)
    return v.replace(terms=v.terms | {rec})


def do_backward(ip, loss: V, node, kind=EventKind.BACKWARD, inputs=None, loss_node=None, kwargs=None, gradient=False):
    for region in ip.st.casts:
        region.backward = True  # a backward inside an autocast region: it trains
    site = Site(ip.st.sf, node)
    frame = ip.st.stack[-1]
    rec = BackwardRec(
        ip.seq(),
        site,
        ip.st.ctx,
        loss,
        kind,
        ip.st.sf.segment(loss_node) if loss_node is not None else "",
        frame.label,
    )
    kwargs = kwargs or {}
    if inputs is None and isinstance(kwargs.get("inputs"), V):
        inputs = kwargs["inputs"]  # `loss.backward(inputs=params)`: only those accumulate a gradient
    rec.inputs = inputs
    rec.nograd = ip.st.nograd
    # `retain_variables=` is retain_graph's name before torch 0.4
    retain, create = kwargs.get("retain_graph", kwargs.get("retain_variables")), kwargs.get("create_graph")
    # retain_graph defaults to create_graph only when it is not given (or None): an explicit
    # `retain_graph=False` frees the graph whatever create_graph says; an unknown flag may keep it
    flag: V | None = retain if isinstance(retain, V) and retain.const is not None else None
    if flag is None and isinstance(create, V):
        flag = create
    rec.retain = flag is not None and flag.const is not False and flag.const is not None
    rec.retain_node = next(
        (k.value for k in getattr(node, "keywords", ()) if k.arg in ("retain_graph", "retain_variables")), None
    )
    rec.gradient = gradient
    interesting = set(loss.org) | set(loss.weak)
    for c in loss.cuts:
        interesting |= c.removed
        interesting |= c.removed_weak
    for o in ip.st.trace.optimizers:
        rec.optimizers.append((o, o.units(), o.complete))
        interesting |= o.units()
    rec.frozen = {u: u.frozen for u in interesting}
    rec.in_eval = frozenset(u for u in loss.org if u.owner is not None and u.owner.training is False)
    rec.versions = {s: s.storage.version for s in loss.saves}
    loops = loop_entries(ip)
    if loops and any(s.certain and not any(c[0] == "loop" and c[1] is loops[-1][1] for c in s.ctx) for s in loss.saves):
        # this backward frees (or, with retain_graph, keeps) graph built before the loop (`emb =
        # gcn(x)` once per epoch, used by every mini-batch): the next iteration reaches it again,
        # so the loop needs its second run even when no name carries state (see run_loop)
        ip.st.graph_writes += 1
    rec.event = event(ip, kind, node, rec)
    ip.st.trace.backwards.append(rec)
    return rec


def stepped(ip, o: OptimObj, node):
    """step() changes every parameter it holds in place: graphs that saved one are stale after."""
    site = Site(ip.st.sf, node)
    for u in o.units():
        u.version += 1
        u.bumps.append((u.version, site, tuple(ip.st.path), ()))


def loop_entries(ip):
    """The loop entries of the context, innermost last."""
    return [c for c in ip.st.ctx if c[0] == "loop"]


def stale_saves(ip, value: V) -> set:
    """The saved tensors of `value` made in an earlier iteration of a loop now in a later run."""
    if not value.saves:
        return set()
    loops = [c for c in loop_entries(ip) if c[4] > 0]
    if not loops:
        return set()
    # the latest iteration of each enclosing loop statement; a save made at an earlier iteration
    # of one of them is stale. Saves share their context tuples: each is judged once
    latest: dict[int, int] = {}
    for lp in loops:
        latest[id(lp[1])] = max(latest.get(id(lp[1]), lp[2]), lp[2])
    judged: dict[int, bool] = {}
    stale = set()
    for s in value.saves:
        old = judged.get(id(s.ctx))
        if old is None:
            old = judged[id(s.ctx)] = any(
                c[0] == "loop" and id(c[1]) in latest and c[2] < latest[id(c[1])] for c in s.ctx
            )
        if old:
            stale.add(s)
    return stale


def note_carry(ip, value: V, stmt):
    """An assignment, in a loop's second run, of a value whose graph was built in an earlier
    iteration: the state a later backward() may reach through (GA301/GA302)."""
    stale = stale_saves(ip, value)
    if stale:
        ip.st.trace.carries.append(CarryRec(Site(ip.st.sf, stmt), frozenset(stale), ip.st.ctx, frozenset(value.saves)))


def loop_key(ctx, i: int) -> int:
    """The key of the loop iteration at `ctx[i]` (as the model's `loops` tuples hold it)."""
    return hash(ctx[: i + 1])


def loop_at(ctx, i: int) -> tuple[int, Site]:
    """(key, where the loop statement is) of the loop iteration at `ctx[i]`."""
    return loop_key(ctx, i), Site(ctx[i][3], ctx[i][1])


def outlived(ip, objs) -> tuple[tuple[int, Site], ...]:
    """The enclosing loop iterations (see `loop_at`) older than every object of `objs`: those whose
    values, stored in them, the next iteration still holds."""
    oldest = min((o.oid for o in objs), default=None)
    if oldest is None:
        return ()
    ctx = ip.st.ctx
    return tuple(loop_at(ctx, i) for i, c in enumerate(ctx) if c[0] == "loop" and oldest < c[5])


def note_accumulation(
    ip,
    value: V,
    stmt,
    added=False,
    outlives: tuple[tuple[int, Site], ...] | None = None,
    held: bool = False,
    keeper: str = "",
    reset=None,
) -> V:
    """`total += loss`, `history.append(loss)` into state that outlives the iteration: the value's
    graph stays alive with it (GA303) unless the accumulation itself is backpropagated. `added`:
    `total += value` onto a number or a tensor, which only a tensor (or a number) survives, so a
    value of unknown type that certainly carries gradient (`outputs.loss` of a library model) is
    a tensor with history there. `outlives`: keys of the loop iterations the state predates (see
    `outlived`), when the caller knows them. `keeper`: the framework that keeps the value (its
    documented behaviour, not code the engine saw: the finding is suspicious). `reset`: the
    statement that resets the state under a condition (see loop_facts.reset_now_and_then)."""
    if value.facts & Fact.NOGRAD:
        return value
    fresh = [o for o in value.objs if isinstance(o, (DictObj, ListObj)) and not outlives_iteration(ip, o)]
    if not value.k & Kind.TENSOR and (value.items is not None or fresh):
        # `outputs.append({"loss": loss, ...})`, `history += [loss]`: what a dict or a list made in
        # this iteration holds is what stays alive. The parts keep the record (their terms), so that
        # a loss later made of them and backpropagated (REINFORCE's `(r, prob[a])` transitions)
        # shows the history was kept for training, not for logging
        def noted(part):
            return (
                note_accumulation(ip, part, stmt, outlives=outlives, held=True, keeper=keeper, reset=reset)
                if isinstance(part, V)
                else part
            )

        for o in fresh:
            if isinstance(o, DictObj):
                for k in list(o.keys):
                    o.keys[k] = noted(o.keys[k])
                if o.rest is not None:
                    o.rest = noted(o.rest)
            elif o.content is not None:
                o.content = noted(o.content)
                if o.elems is not None:
                    o.elems = [noted(e) for e in o.elems]
        if value.items is not None:
            return value.replace(items=tuple(noted(part) for part in value.items))
        return value
    # backpropagated: it is or holds a graph the engine did not see being built
    backpropagated = bool(value.marks & (Mark.GRAPH | Mark.HOLDS_GRAPH)) and not value.org
    if not (value.saves or value.org or backpropagated):
        return value
    if not (value.saves or backpropagated or value.weak or value.top or value.unk):
        # every op upstream was seen and none saved a tensor for backward: the graph it holds is a
        # chain of views and sums back to leaves (`latent - lr * grad` of a fresh leaf), which keeps
        # no activation alive
        return value
    if not value.saves and value.objs and all(isinstance(o, (Unit, PIter)) for o in value.objs):
        # a leaf itself (a distilled image, a weight), or what `.parameters()` yields (a set of
        # parameters gathered into optimizer groups): no history to keep alive
        return value
    if not (value.k & Kind.TENSOR or backpropagated or (added and value.org and any(s.certain for s in value.saves))):
        return value
    loops = loop_entries(ip)
    if loops and value.saves:
        # the iterations the state outlives: the innermost loop's when not known, else every loop
        # older than the state (`meter.sum[i] += v` in a helper's loop over the values, called from
        # the training loop: the training loop's iterations)
        keys = {k for k, _ in outlives} if outlives else set()
        kept = [c for i, c in enumerate(ip.st.ctx) if c[0] == "loop" and loop_key(ip.st.ctx, i) in keys]
        if not any(c in s.ctx for c in (kept or loops[-1:]) for s in value.saves):
            # every graph it holds was built before those iterations (`for sl in style_losses: score
            # += sl.loss` after one forward): accumulating it keeps nothing alive not alive anyway
            return value
    rec = AccRec(
        Site(ip.st.sf, stmt),
        ip.st.ctx,
        value.org,
        tensor=bool(value.k & Kind.TENSOR) and not value.marks & Mark.HOLDS_GRAPH,
        outlived=outlives,
        held=held,
        handed=_handed_in(ip, value),
        keeper=keeper,
        reset=Site(ip.st.sf, reset) if reset is not None else None,
    )
    ip.st.trace.accums.append(rec)
    return value.replace(terms=value.terms | {rec})


def _handed_in(ip, value: V) -> Site | None:
    """The call, made in the innermost loop iteration that built `value`'s graph, of the function
    that now adds `value` to a state, when the value came in through that call (no op saving a
    tensor for it ran inside the call); None when it was built where it is added."""
    ctx = ip.st.ctx
    built = [i for i, c in enumerate(ctx) if c[0] == "loop" and any(c in s.ctx for s in value.saves)]
    if not built:
        return None
    for c in ctx[built[-1] + 1 :]:
        if c[0] == "call":
            if any(c in s.ctx for s in value.saves):
                return None
            return Site(c[3], c[1])
    return None


def outlives_iteration(ip, obj) -> bool:
    """`obj` was made before the current loop iteration: what is stored in it is seen by the next."""
    loops = loop_entries(ip)
    return bool(loops) and obj.oid < loops[-1][5]


def note_graph_write(ip, obj, value: V):
    """A value with graph stored into an object older than the iteration: the next iteration may
    read it, so the loop is run a second time (see Interpreter.run_loop)."""
    if value.saves and outlives_iteration(ip, obj):
        ip.st.graph_writes += 1


def note_crossing(ip, m, args, node=None, inner=False):
    """A module applied to a tensor that carries gradient from parameters it does not own (a
    discriminator on a generator's output): where one model's output enters another's loss.
    `inner`: a call inside another module's forward (a discriminator a VAE holds and applies to
    its reconstruction), a crossing only when different optimizers train the two sides."""
    if ip.st.nograd is not None:
        return
    if inner and len(ip.st.trace.optimizers) < 2:
        return
    foreign = set()
    for a in args:
        if isinstance(a, V) and a.org:
            foreign |= a.org
    if not foreign:
        return
    own = set(m.units())
    foreign -= own
    # frozen while it scores (`critic.requires_grad_(False)` around the actor's loss): no gradient
    # reaches it through this call, whatever it is at backward()
    own = {u for u in own if u.frozen != FROZEN}
    if inner and own and foreign and not _trained_apart(ip, own, foreign):
        return
    if own and foreign:
        stmt = ip.st.cur_stmt if ip.st.cur_stmt is not None else None
        rec = CrossRec(
            ip.seq(),
            Site(ip.st.sf, stmt) if stmt is not None else None,
            frozenset(own),
            frozenset(foreign),
            ip.st.ctx,
        )
        given = getattr(node, "args", [])
        for a, n in zip(args, given):
            if isinstance(a, V) and a.org & foreign and not isinstance(n, ast.Starred):
                rec.arg = Site(ip.st.sf, n)  # the argument bringing the other model's gradient
                _use_at_caller(ip, rec, a, n)
                break
        ip.st.trace.crossings.append(rec)


def _use_at_caller(ip, rec, value: V, node) -> None:
    """The other model's output is a parameter of the function that applies this model, handed in
    as it is by the caller (`net.calculate_fractions(state_embeddings=emb)`, the fractions computed
    inside): the use the catalog anchors at, and where the `.detach()` goes, is that argument at
    the call, climbing while each caller got it as a parameter in turn."""
    for frame in reversed(ip.st.stack):
        site = frame.call_site
        if site is None or not isinstance(node, ast.Name) or not value.objs or not value.objs <= frame.arg_objs:
            return
        at = _argument_for(site.node, frame.func.node, node.id, bound=frame.self_v is not None)
        if at is None:
            return
        rec.site, rec.arg, node = site, Site(site.mod, at), at


def _argument_for(call, fn_node, name: str, bound: bool):
    """The argument expression of `call` that binds the parameter `name` of `fn_node`."""
    if not isinstance(call, ast.Call) or not isinstance(fn_node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return None
    for k in call.keywords:
        if k.arg == name:
            return k.value
    params = [a.arg for a in (*fn_node.args.posonlyargs, *fn_node.args.args)][1 if bound else 0 :]
    if name not in params or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    i = params.index(name)
    return call.args[i] if i < len(call.args) else None


def note_score(ip, logp: V, weight: V, node) -> frozenset:
    """`-log_prob * advantage` where the advantage carries gradient from parameters the
    log-probability does not reach (a critic's value): recorded with a token for the product's
    risks, so the backward()s whose loss holds the term are known (GA304)."""
    if ip.st.nograd is not None or not logp.marks & Mark.LOGP or logp.marks & weight.marks & Mark.LOGP:
        return frozenset()
    units = frozenset(u for u in weight.org - logp.org if u.frozen != FROZEN and u.kind == Unit.PARAM)
    if not units:
        return frozenset()
    site = Site(ip.st.sf, node)
    token = RiskRec("score", site, "a weighted log-probability", SUSPICIOUS, ip.st.ctx, latent=True)
    ip.st.trace.scores.append(ScoreRec(ip.seq(), site, units, token))
    return frozenset((token,))


def note_regression(ip, op, argv) -> None:
    """A regression loss taken of values carrying gradient (a critic's `mse_loss(value, ret)`)."""
    if op in T.REGRESSION_LOSSES and ip.st.nograd is None:
        for v in argv[:2]:
            if isinstance(v, V):
                ip.st.trace.regressed.update(v.org)


def _trained_apart(ip, own: set, foreign: set) -> bool:
    """An optimizer built so far trains `own` and none of `foreign`, and another the reverse."""
    held = [o.units() for o in ip.st.trace.optimizers]
    return any(h & own and not h & foreign for h in held) and any(h & foreign and not h & own for h in held)


def reads_own_grad(ip, storage) -> bool:
    """The current statement reads `.grad` of this tensor (`W -= lr * W.grad`)."""
    stmt = ip.st.cur_stmt
    return any(g.stmt.node is stmt and storage in g.storages for g in ip.st.trace.grad_reads[-8:])


def note_grad_read(ip, recv: V, node):
    """`.grad` of a computed tensor (an activation, a weight rebound out of place): None unless
    retain_grad() was called on it (GA306)."""
    stores = [o for o in recv.objs if isinstance(o, TensorObj)]
    leaves = [o for o in recv.objs if isinstance(o, Unit) and o.kind == Unit.LEAF]
    if leaves:
        ip.st.trace.leaf_grad_reads.extend(leaves)
    if not stores or any(isinstance(o, Unit) for o in recv.objs) or recv.facts & Fact.NOGRAD:
        return
    if not recv.org or recv.unk or any(s.retained for s in stores):
        return  # only what certainly requires grad and was certainly computed here
    ip.st.trace.grad_reads.append(
        GradReadRec(Site(ip.st.sf, node), Site(ip.st.sf, ip.st.cur_stmt), recv.org, ip.st.ctx, frozenset(stores))
    )


# what unseen code can change: the objects a training step is made of
_HANDLES = (ModuleObj, Unit, OptimObj, PIter)


def handles(values, depth: int = 0, out: set | None = None) -> set:
    """The modules, leaves, optimizers and parameter iterators in `values` (and in the lists, dicts
    and plain instances they hold, a few levels deep): what code handed these values can reach."""
    out = set() if out is None else out
    for v in values:
        if isinstance(v, Star):
            v = v.value
        if not isinstance(v, V):
            continue
        for o in v.objs:
            if isinstance(o, _HANDLES):
                out.add(o)
            elif depth < 2 and isinstance(o, (ListObj, DictObj)):
                handles(o.content_value(), depth + 1, out)
            elif depth < 1 and isinstance(o, InstanceObj):
                handles(list(o.attrs.values()), depth + 1, out)
        if v.items is not None and depth < 2:
            handles(v.items, depth + 1, out)
    return out


def note_unseen(ip, kind, node, values, everything=False):
    """Code the engine does not see is handed `values`: what it may change is recorded (the premises
    of findings about those objects lean on it)."""
    objs = handles(values)
    if not objs and not everything:
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in T.READ_ONLY_MODEL_METHODS:
            return  # `model.print_trainable_parameters()`: it only reads the model
    detail = " ".join(ip.st.sf.segment(node).split()) if node is not None and hasattr(node, "lineno") else ""
    site = Site(ip.st.sf, node if node is not None and hasattr(node, "lineno") else ip.st.cur_stmt)
    if site.node is None:
        return
    ip.st.trace.unseen.append(
        UnseenRec(ip.seq(), kind, site, ip.st.ctx, frozenset(objs), detail, tuple(ip.st.path), everything)
    )


def stored(ip, o, attr: str, old: V | None, value: V, several: bool = False) -> V:
    """What attribute `attr` of `o` holds after `value` is stored in it. Under a condition that began
    after `o` was made, the old value stays joined (when the condition is false the attribute keeps
    it; `if eps: self.opt = Adam(..., eps=eps) else: self.opt = Adam(...)` leaves one of the two),
    unless the other arm of that `if` set it too; at run time the store usually replaced it, so its
    graph is not one a later backward() certainly reaches (`if tuning: self.alpha = log_alpha.exp()`)."""
    weak = several or (bool(ip.st.cond_oids) and o.oid < ip.st.cond_oids[-1])
    if not weak:
        return value
    if ip.st.arm_stores and not several:
        first, mine = ip.st.arm_stores[-1]
        mine[(o.oid, attr)] = value
        if (o.oid, attr) in first:
            old = first[(o.oid, attr)]  # both arms store it: what it held before the if is gone
    if old is not None:
        ip.st.trace.maybe_cleared |= held_saves(old)
        old = _without_earlier_runs(old, value)
    return join(old, value)


_FRESH = (ListObj, DictObj)


def _without_earlier_runs(old: V, value: V) -> V | None:
    """`old` less the lists and dicts made by the statement that made `value`'s, on an earlier run
    of it: a method called under a condition at each iteration (`self.parts = []`, then appends)
    would otherwise keep every earlier run's list in the attribute, and an append would go to all of
    them, which grow with each call (PyG's GraphMaskExplainer: 26 lists, 19,000 layers). At run time
    the attribute holds one of them, made by the same code; the newest stands for the others."""
    made = {(type(o), o.site.node) for o in value.objs if type(o) in _FRESH and o.site is not None}
    if not made:
        return old
    kept = frozenset(
        o for o in old.objs if not (type(o) in _FRESH and o.site is not None and (type(o), o.site.node) in made)
    )
    if len(kept) == len(old.objs):
        return old
    if not kept and not (old.k & ~(Kind.LIST | Kind.DICT)):
        return None
    return old.replace(objs=kept)


def held_saves(v: V) -> frozenset:
    """The saved tensors a value keeps alive: its own graph's, and those of what a list or a dict
    it refers to holds (`self.values = []` drops the graphs of the old list's elements)."""
    out = set(v.saves)
    for o in v.objs:
        if isinstance(o, ListObj) and isinstance(o.content, V):
            out |= o.content.saves
        elif isinstance(o, DictObj):
            for kv in (*o.keys.values(), o.rest):
                if isinstance(kv, V):
                    out |= kv.saves
    return frozenset(out)

"""Statements of the abstract interpreter: assignments, branches, loops (run twice, so that what one
iteration hands to the next is seen), try, functions and classes, imports.

One handler per statement node type (STATEMENTS); `Interpreter.exec_stmt` dispatches on it. A
`with` statement is torch semantics (grad mode, autocast: ip.sem.with_statement).
"""

from __future__ import annotations

import ast
import functools
import re
from typing import cast

from ..ops import torch_api as T
from ..source import nodes
from . import calls, flags, recording, settings
from .builtins import import_module
from .containers import clear_list, columns
from .core import Interp
from .expressions import BUILTINS, STAR, eval_args, known_sequence, narrowed, truth
from .frames import Frame, Split, trains
from .loop_facts import attr_key, carried, counter_like, kept, rebound, reset_at
from .objects import (
    FROZEN,
    STORAGE,
    ClassObj,
    CtxObj,
    DictObj,
    FuncObj,
    InstanceObj,
    LazyImport,
    ListObj,
    ModuleObj,
    OptimObj,
    PIter,
    ScalerObj,
    SchedObj,
    Site,
    SymObj,
    Unit,
    module_value,
    next_oid,
    unit_value,
)
from .operators import binop, scales
from .trace import InplaceRec
from .values import EMPTY, NOCONST, NONE, UNKNOWN, Fact, Kind, Mark, V, const, flow_of, join, make_tuple

_LOOP_RUNS = 2
# a cheap loop (a recurrence over time steps) whose carried values still gain gradient sources
# after its second run runs again, up to this many runs: `syn = a * syn + h; mem = b * mem + syn;
# out = spike(mem)` needs three before the recurrent weight in `h` reaches `out`
_LOOP_RUNS_MAX, _CHEAP_RUN = 4, 120


def _join_envs(a: dict | None, b: dict | None) -> dict | None:
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    out = dict(a)
    for k, v in b.items():
        old = out.get(k)
        if old is not v:  # most names hold the same value on both arms
            out[k] = v if old is None else join(old, v)
    return out


def _assign_env(env: dict, new: dict):
    env.clear()
    env.update(new)


def _parks_an_object(recv: V, value: V, target: ast.Attribute) -> bool:
    """`name.attr = obj` where `name` holds an unknown value of no object (a call's result the engine
    did not follow) and `obj` is one the engine made (a module, an optimizer, an instance)."""
    return (
        isinstance(target.value, ast.Name)
        and not recv.objs
        and bool(recv.k & Kind.UNKNOWN)
        and not recv.k & (Kind.NUMBER | Kind.STR | Kind.TENSOR | Kind.NONE)
        and any(isinstance(o, (ModuleObj, InstanceObj, OptimObj)) for o in value.objs)
    )


def _s_expr(ip: Interp, stmt, env):
    node = stmt.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in T.ACCUMULATING_METHODS
        and len(node.args) == 1
        and not isinstance(node.args[0], ast.Starred)
        and recording.loop_entries(ip)
    ):
        _inplace_added(ip, stmt, node, env)
        return env
    ip.eval(node, env)
    return env


def _inplace_added(ip: Interp, stmt, node: ast.Call, env) -> None:
    """`running_loss.add_(loss)`, `self.total.add_(loss * n)`: a tensor that outlives the iteration
    summed in place, as `+=` sums it (GA303). Evaluated as the call is (arguments, then receiver)."""
    func = node.func
    assert isinstance(func, ast.Attribute)
    args, kwargs = eval_args(ip, node, env)
    recv = ip.eval(func.value, env)
    value = args[0] if args else None
    target = func.value
    chained = False
    while isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and target.func.attr.endswith("_"):
        # `self.avg.mul_(m).add_(v)`: an in-place op returns its receiver
        target, chained = target.func.value, True
    if isinstance(value, V) and recv.k & Kind.TENSOR and not recv.k & (Kind.NUMBER | Kind.LIST) and _holds_graph(value):
        if chained or func.attr == "copy_":
            # a running statistic written in place; a copy that does not read the tensor's own value
            # is none (_written_in_place)
            written = _written_in_place(ip, stmt, recv, value) if chained or _reads(node.args[0], target) else None
            if written is not None:
                args[0] = written
        elif isinstance(target, ast.Name) and _accumulates(ip, target.id):
            args[0] = _kept_in_local(ip, stmt, target.id, value, True)
        elif isinstance(target, ast.Attribute):
            args[0] = _kept_on_owner(ip, stmt, target, value, env)
    ip.call_method(recv, func.attr, args, kwargs, node, env)


def _s_assign(ip: Interp, stmt, env):
    split = _flag_arms(ip, stmt, env)
    if split is None:
        value = ip.eval(stmt.value, env)
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = _running_value(ip, stmt, stmt.targets[0].id, value, env)
        elif len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Attribute, ast.Subscript)):
            value = _running_state(ip, stmt, stmt.targets[0], value, env)
        for target in stmt.targets:
            assign(ip, target, value, env, stmt)
        return env
    flag, when_true, when_false = split
    # the same statement run again (the next iteration) adds to what it split before
    kept = dict(ip.st.stack[-1].splits)
    for target in stmt.targets:
        assign(ip, target, join(when_true, when_false), env, stmt)
    _record_split(ip, stmt.targets, flag, when_true, when_false, kept)
    return env


def _flag_arms(ip: Interp, stmt, env):
    """`best = f(x) if use_best else x` on a flag the function never assigns: (flag, polarity) and
    the two arms' values, each evaluated once, for names that get their objects on one arm only."""
    node = stmt.value
    if not isinstance(node, ast.IfExp):
        return None
    flag = flags.flag(ip, node.test)
    if flag is None or truth(ip.eval(node.test, env)) is not None:
        return None
    yes, no = ip.eval(node.body, env), ip.eval(node.orelse, env)
    name, polarity = flag
    return (name, yes, no) if polarity else (name, no, yes)


def _record_split(ip: Interp, targets, flag: str, when_true: V, when_false: V, kept: dict):
    """What each target got only when `flag` is true, and only when it is false (Frame.splits),
    added to what this statement split before (`kept`: the splits before its targets were bound)."""
    pairs = []
    for target in targets:
        if isinstance(target, ast.Name):
            pairs.append((target.id, when_true, when_false))
        elif isinstance(target, (ast.Tuple, ast.List)):
            names = [e.id for e in target.elts if isinstance(e, ast.Name)]
            a, b = when_true.items, when_false.items
            if a is None or b is None or not len(names) == len(target.elts) == len(a) == len(b):
                continue
            pairs.extend(zip(names, a, b))
    splits = ip.st.stack[-1].splits
    for name, t, f in pairs:
        only_false, only_true = f.objs - t.objs, t.objs - f.objs
        before = kept.get(name)
        if before is not None and flag in before:
            only_false, only_true = only_false | before[flag].only_false, only_true | before[flag].only_true
        if only_false or only_true:
            splits[name] = {flag: Split(only_false, only_true)}


def _s_annassign(ip: Interp, stmt, env):
    if stmt.value is not None:
        value = ip.eval(stmt.value, env)
        assign(ip, stmt.target, value, env, stmt)
    return env


def _repeats_within(loops: list, name: str) -> bool:
    """`for _ in range(k): ... total += loss` inside a loop that starts `total` afresh each time
    (`total = 0.0` per batch, k discriminator steps per generator step): the sum holds at most k
    graphs, all let go with the next reset, not every iteration's of the training run."""
    if not _counts(loops[-1]["node"]):
        return False
    # the enclosing loop that resets it walks the data (`for batch in loader`), not a count of epochs
    return any(
        name in rebound(lp["node"]) and isinstance(lp["node"], ast.For) and not _counts(lp["node"]) for lp in loops[:-1]
    )


def _one_step_sum(ip: Interp, loops: list, name: str) -> bool:
    """`total = torch.zeros([])`, then `for _ in range(accumulate): ...backward(); total += loss`,
    then `optimizer.step()`, all in one function (lightweight-gan's train step): the sum is a local of
    one call over the micro-batches of one step, so it holds at most that many graphs (whose saved
    tensors backward() already freed) and is let go when the call returns. A loop that steps the
    optimizer inside is the training run itself, not this."""
    loop = loops[-1]["node"]
    fn = ip.st.stack[-1].func
    if len(loops) > 1 or fn is None or not isinstance(fn.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    lines = ip.st.sf.lines
    if _STEPS.search("\n".join(lines[loop.lineno - 1 : loop.end_lineno])):
        return False
    # the step those micro-batches accumulate for comes after the loop, in the same call
    if not _STEPS.search("\n".join(lines[loop.end_lineno : fn.node.end_lineno])):
        return False
    outside = [s for s in fn.node.body if s is not loop]
    return any(name in rebound(s) for s in outside if not isinstance(s, (ast.For, ast.While)))


_STEPS = re.compile(r"\.step\(")


def _counts(loop) -> bool:
    """`for _ in range(...)`: a loop over a count."""
    it = getattr(loop, "iter", None) if isinstance(loop, ast.For) else None
    return isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"


def _outlived_name(ip: Interp, name: str) -> tuple:
    """Keys of the iterations, of this frame's loops, that a local `name` outlives: the loops that
    carry it from one iteration to the next and never rebind it (a local is made anew by each call,
    so it outlives no iteration of a caller's loop)."""
    ctx = ip.st.ctx
    start = max((i for i, c in enumerate(ctx) if c[0] != "loop"), default=-1) + 1
    out = []
    for i in range(start, len(ctx)):
        node = ctx[i][1]
        if name in carried(node)[0] and kept(node, name):
            out.append(recording.loop_at(ctx, i))
    return tuple(out)


def _as_counter(new: V) -> V:
    """A number kept in state older than the iteration and changed in place (`self.micro += 1`,
    `state["iter_num"] += 1`, litgpt): a counter, which differs from one iteration to the next; the
    engine runs an iteration once or twice, so its value there proves nothing about
    `if self.micro % accum == 0`."""
    return new.replace(const=NOCONST) if new.k == Kind.NUMBER and new.const is not NOCONST else new


def _copied_out(ip: Interp, target, old: V, env) -> bool:
    """`target` is a subscript of a plain name or attribute whose read gave a copy (no storage of the
    indexed tensor is in `old`)."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, (ast.Name, ast.Attribute))):
        return False
    base = ip.eval(target.value, env)
    held = {o for o in base.objs if isinstance(o, STORAGE)}
    return bool(held) and not any(o in held for o in old.objs)


def _accumulates(ip: Interp, name: str) -> bool:
    """A local carried from one iteration of the innermost loop to the next and never started
    afresh in it (or only now and then): what is added to it stays."""
    loops = ip.st.stack[-1].loops
    return (
        bool(loops)
        and name in carried(loops[-1]["node"])[0]
        and kept(loops[-1]["node"], name)
        and not _repeats_within(loops, name)
        and not _one_step_sum(ip, loops, name)
    )


def _running_value(ip: Interp, stmt, name: str, value: V, env) -> V:
    """`avg = avg + score`, `ema = 0.99 * ema + 0.01 * loss`, `mean = (mean * n + v) / (n + 1)`: a
    running sum or mean rebuilt from its own last value each iteration, as `avg += score` is: the
    new value's graph holds every earlier one (GA303)."""
    node = stmt.value
    if not _holds_graph(value) or not isinstance(node, ast.BinOp):
        return value  # a counter, a number: no graph to keep (the common case, decided first)
    if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)) or not _accumulates(ip, name):
        return value
    old = env.get(name) if env is not None else None
    return _kept_in_local(ip, stmt, name, value, isinstance(old, V) and bool(old.k & (Kind.NUMBER | Kind.TENSOR)))


def _kept_in_local(ip: Interp, stmt, name: str, value: V, added: bool) -> V:
    """`value` added into the local `name` that accumulates (`_accumulates`): noted (GA303)."""
    loop = ip.st.stack[-1].loops[-1]["node"]
    return recording.note_accumulation(
        ip, value, stmt, added, outlives=_outlived_name(ip, name), reset=reset_at(loop, name)
    )


def _kept_in_attribute(ip: Interp, stmt, target, old_objs: list, value: V) -> V:
    """`value` added into an attribute of objects older than the iteration (`self.running_loss`):
    noted unless the loop resets the attribute at every iteration."""
    loops = ip.st.stack[-1].loops
    if loops and not kept(loops[-1]["node"], attr_key(target)):
        return value
    reset = reset_at(loops[-1]["node"], attr_key(target)) if loops else None
    return recording.note_accumulation(ip, value, stmt, outlives=recording.outlived(ip, old_objs), reset=reset)


def _kept_on_owner(ip: Interp, stmt, target: ast.Attribute, value: V, env) -> V:
    """`value` added into `target` (`self.running_loss`): noted when the attribute's owner is older
    than the iteration (_kept_in_attribute); the value as it is otherwise."""
    owner = ip.eval(target.value, env)
    old_objs = [o for o in owner.objs if recording.outlives_iteration(ip, o)]
    return _kept_in_attribute(ip, stmt, target, old_objs, value) if old_objs else value


def _older_containers(ip: Interp, recv: V) -> list:
    """The lists and dicts among `recv`'s objects that are older than the iteration."""
    return [o for o in recv.objs if isinstance(o, (ListObj, DictObj)) and recording.outlives_iteration(ip, o)]


def _holds_graph(value: V) -> bool:
    """What note_accumulation would look at: a value with history, or one that holds a graph."""
    return bool(value.saves or value.org or value.marks & (Mark.GRAPH | Mark.HOLDS_GRAPH))


def _reads_itself(stmt, target) -> bool:
    """`x = f(x, ...)` by arithmetic: the value assigned is computed from the target's own."""
    return isinstance(stmt.value, ast.BinOp) and _reads(stmt.value, target)


def _running_state(ip: Interp, stmt, target, value: V, env) -> V:
    """`self.avg = self.avg * 0.9 + loss`, `avgs[k] = avgs[k] * n + v` (a running mean kept in an
    object or a container older than the iteration): as `+=` into them, what is added stays. And
    `buf[:] = v` into a tensor older than the iteration (_written_in_place)."""
    if not _holds_graph(value) or not recording.loop_entries(ip):
        return value
    if isinstance(target, ast.Subscript) and _reads(stmt.value, target.value):
        written = _written_in_place(ip, stmt, ip.eval(target.value, env), value)
        if written is not None:
            return written
    if not _reads_itself(stmt, target):
        return value
    if isinstance(target, ast.Attribute):
        return _kept_on_owner(ip, stmt, target, value, env)
    held = _older_containers(ip, ip.eval(target.value, env))
    return recording.note_accumulation(ip, value, stmt, True, outlives=recording.outlived(ip, held)) if held else value


def _reads(expr, part) -> bool:
    """`expr` reads `part` (the same code: `self.stored_mean` in `self.stored_mean * m + v`)."""
    text = ast.unparse(part)
    return any(isinstance(n, type(part)) and ast.unparse(n) == text for n in ast.walk(expr))


def _written_in_place(ip: Interp, stmt, tensor: V, value: V) -> V | None:
    """`self.stored_mean[:] = self.stored_mean * m + v`, `buf.copy_(buf * m + v)`,
    `buf.mul_(m).add_(v)`: a running statistic kept in a tensor older than the iteration, written
    in place with a value that has history, takes that history and links to the version it
    overwrote (torch's CopySlices and CopyBackwards), so every iteration's graph stays alive
    (synsin's running statistics). The value noted (GA303), or None when `tensor` is no such tensor
    or grad mode is off (an in-place write under no_grad records nothing). Only a write that reads
    the tensor's own value: one that does not is as often written once (a normalisation constant
    set on the first call) or cut each step elsewhere (TGN's `memory.detach_()`)."""
    if ip.st.nograd is not None or not tensor.k & Kind.TENSOR or tensor.k & (Kind.LIST | Kind.NUMBER):
        return None
    old = [o for o in tensor.objs if isinstance(o, STORAGE) and recording.outlives_iteration(ip, o)]
    if not old:
        return None
    return recording.note_accumulation(ip, value, stmt, True, outlives=recording.outlived(ip, old))


def _s_augassign(ip: Interp, stmt, env):
    target = stmt.target
    old = ip.eval(target, env)
    rhs = ip.eval(stmt.value, env)
    if isinstance(target, ast.Name) and _accumulates(ip, target.id):
        added = isinstance(stmt.op, (ast.Add, ast.Sub)) and bool(old.k & (Kind.NUMBER | Kind.TENSOR))
        # `total += loss` across iterations, never reset (or only now and then)
        rhs = _kept_in_local(ip, stmt, target.id, rhs, added)
    # `feats += feat` of a list: the target is no tensor (a tensor plus a list raises)
    seq = isinstance(stmt.op, ast.Add) and rhs.k in (Kind.LIST, Kind.TUPLE)
    tensor = bool(old.k & Kind.TENSOR) and not (old.k & (Kind.NUMBER | Kind.LIST)) and not seq
    if tensor and _copied_out(ip, target, old, env):
        # `h[mask] *= s`: torch's advanced indexing read a copy, and the result is written back
        # into `h` (x[i] = x[i] * s), an in-place change of `h` itself
        # (what the operation risks stays its own, as for a view: `h[m] *= 0.5 / norm`, and
        # `cost[m] /= norm[m]` under a mask `norm != 0` the engine cannot relate to the divisor)
        written = binop(ip, stmt.op, old, rhs, stmt)
        written = written.replace(risks=old.risks)
        assign(ip, target, written, env, stmt)
        return env
    if old.k & Kind.TENSOR and not (old.k & (Kind.NUMBER | Kind.LIST)) and not seq:
        if (
            isinstance(stmt.op, (ast.Add, ast.Sub))
            and isinstance(target, ast.Attribute)
            and recording.loop_entries(ip)
            and _holds_graph(rhs)
        ):
            # `self.running_loss += loss` onto a tensor (`torch.Tensor([0.0])` each epoch) of an object
            # older than the iteration: summed in place, what is added stays alive with it
            rhs = _kept_on_owner(ip, stmt, target, rhs, env)
        hazards = None
        if isinstance(stmt.op, (ast.Div, ast.Pow)):
            # `p /= p.sum()` computes what `p / p.sum()` does: the same numerical hazards (GA402,
            # GA404); only those are taken from it, the in-place op's graph is its own
            hazards = binop(ip, stmt.op, old, rhs, stmt)
        new = ip.sem.tensors.inplace(ip, old, rhs, stmt, stmt, op=type(stmt.op).__name__, target_node=target)
        if hazards is not None:
            new = new.replace(risks=new.risks | hazards.risks, marks=new.marks | hazards.marks)
        if scales(stmt.op, old, rhs):
            new = new.replace(marks=new.marks | Mark.SCALED)  # `loss /= accumulation_steps`
        if isinstance(target, ast.Name):
            bind_name(ip, target.id, new, env, stmt, rebind_check=False)
        elif isinstance(target, ast.Attribute):
            # `state.loss += term` is `state.loss = state.loss.__iadd__(term)`: the attribute holds
            # the tensor with the term's graph from here on
            assign(ip, target, new, env, stmt)
        elif (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and env is not None
            and isinstance(base := env.get(target.value.id), V)
            and rhs.carries
            and any(isinstance(o, STORAGE) for o in base.objs)
        ):
            # `bbox_loss[i] += F.mse_loss(...)`: the tensor now carries what was added into it, as
            # with `bbox_loss[i] = ...` (calls.set_item)
            f = flow_of(base, new)
            env[target.value.id] = base.replace(
                org=f.org, weak=f.weak, top=f.top, cuts=f.cuts, saves=f.saves, terms=f.terms
            )
        return env
    if old.k & Kind.LIST and old.of(ListObj):
        src = rhs.of(ListObj)
        for o in old.of(ListObj):
            if len(src) == 1 and src[0].elems is not None:
                for e in list(src[0].elems):
                    o.add(e)
            elif rhs.items is not None:
                for e in rhs.items:
                    o.add(e)
            else:
                o.add(ip.iter_value(rhs))
        return env
    if isinstance(target, ast.Attribute) and recording.loop_entries(ip):
        recv = ip.eval(target.value, env)
        old_objs = [o for o in recv.objs if recording.outlives_iteration(ip, o)]
        if old_objs:
            # state on an object older than the iteration (`self.running_loss += loss` in a
            # train_step called from the loop): what is added stays alive unless the loop resets it
            rhs = _kept_in_attribute(ip, stmt, target, old_objs, rhs)
            assign(ip, target, _as_counter(binop(ip, stmt.op, old, rhs, stmt)), env, stmt)
            return env
    if isinstance(target, ast.Subscript) and recording.loop_entries(ip):
        held = _older_containers(ip, ip.eval(target.value, env))
        if held:
            # `meter.sum[i] += loss`, `totals[name] += loss`: an element of a list or dict older than the
            # iteration keeps what is added to it
            added = isinstance(stmt.op, (ast.Add, ast.Sub))
            rhs = recording.note_accumulation(ip, rhs, stmt, added, outlives=recording.outlived(ip, held))
            assign(ip, target, _as_counter(binop(ip, stmt.op, old, rhs, stmt)), env, stmt)
            return env
    new = binop(ip, stmt.op, old, rhs, stmt)
    assign(ip, target, new, env, stmt)
    return env


# the last `elif` of chains that compare one value to several constants (`if args.loss == "wgan":
# ... elif args.loss == "r1": ...`): a configuration dispatch over its choices, whose fall-through
# (none of them) is not a path of the program. Marked on the node itself (trees are reused across
# runs): a set of node ids would outlive the trees, and a new node given a freed one's id would
# be taken for a dispatch's last arm
_TAIL = "_gradaudit_dispatch_tail"


def _dispatch_tail(stmt) -> ast.If | None:
    """The last If of an if/elif chain of at least two `x == constant` tests on the same `x`, with no
    final else; None for any other statement."""
    chain, node = [], stmt
    while isinstance(node, ast.If):
        t = node.test
        if not (
            isinstance(t, ast.Compare)
            and len(t.ops) == 1
            and isinstance(t.ops[0], ast.Eq)
            and isinstance(t.comparators[0], ast.Constant)
            and isinstance(t.left, (ast.Name, ast.Attribute))
        ):
            return None
        chain.append(node)
        if not node.orelse:
            break
        if len(node.orelse) != 1:
            return None
        node = node.orelse[0]
    else:
        return None
    if len(chain) < 2 or len({ast.dump(cast(ast.Compare, n.test).left) for n in chain}) != 1:
        return None
    return chain[-1]


_PURE_TEST = (
    ast.Name,
    ast.Attribute,
    ast.Constant,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.Load,
    ast.boolop,
    ast.cmpop,
    ast.unaryop,
    ast.operator,
)


def _test_key(test) -> str | None:
    """The text of a test made of names, attributes, constants and operators only (no call, no
    subscript): evaluating it twice gives the same truth while none of its names is assigned."""
    if "_ga_guard" not in test.__dict__:
        pure = all(isinstance(n, _PURE_TEST) for n in ast.walk(test))
        test._ga_guard = ast.dump(test) if pure else None
    return test._ga_guard


def _stored_lines(fn_node) -> dict[str, list[int]]:
    """Name or attribute path -> the lines where the function (or module) assigns it, cached."""
    found = getattr(fn_node, "_ga_stored_lines", None)
    if found is None:
        found = {}
        for n in ast.walk(fn_node):
            if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, (ast.Store, ast.Del)):
                found.setdefault(attr_key(n), []).append(n.lineno)
        fn_node._ga_stored_lines = found
    return found


def _guard_of(ip: Interp, frame, stmt) -> list[dict] | None:
    """What earlier `if`s of the same test, in this iteration of this call, gave each name on each
    arm (latest first), when nothing assigned a name of the test since."""
    key = _test_key(stmt.test)
    if key is None or key not in frame.guards:
        return None
    owner = frame.func.node if frame.func is not None else getattr(ip.st.sf, "tree", None)
    if owner is None:
        return None
    stored = _stored_lines(owner)
    names = [attr_key(n) for n in ast.walk(stmt.test) if isinstance(n, (ast.Name, ast.Attribute))]
    out = []
    for ctx, line, values in reversed(frame.guards[key]):
        if ctx is not ip.st.ctx or line >= stmt.lineno:
            continue
        if any(line < at < stmt.lineno for name in names for at in stored.get(name, ())):
            continue
        out.append(values)
    return out or None


def _guarded(found: list[dict] | None, arm: int, env: dict) -> dict:
    """The arm's env with each name still holding an earlier test's joined value narrowed to what
    that test's same arm gave it."""
    for values in found or ():
        for name, parts in values.items():
            if env.get(name) is parts[0] and parts[arm] is not None:
                env[name] = parts[arm]
    return env


def _note_guard(ip: Interp, frame, stmt, env, a: dict | None, b: dict | None, merged: dict) -> None:
    key = _test_key(stmt.test)
    if key is None or a is None or b is None:
        return
    values = {
        n: (merged[n], a.get(n), b.get(n))
        for n in merged
        if a.get(n) is not b.get(n) and a.get(n) is not None and b.get(n) is not None
    }
    if values:
        records = [r for r in frame.guards.get(key, ()) if r[0] is ip.st.ctx][-7:]
        records.append((ip.st.ctx, stmt.end_lineno or stmt.lineno, values))
        frame.guards[key] = records


def _setting_arms(ip: Interp, test, env, a, b):
    """In a loop's later run, under a configuration setting (`if self.emb_reg:`, the same truth in
    every iteration), a name one arm assigns and the other leaves does not hold, on the other arm,
    what the assigning arm made in an earlier iteration: that arm never ran in this run of the
    program. It holds what the loop found (or nothing). Without this, a value made under one setting
    and read under a correlated one (`fuse_output` made when `emb_reg`, used when `emb_fuse`) looks
    carried over from the previous iteration's graph."""
    loops = ip.st.stack[-1].loops
    if a is None or b is None or not loops:
        return a, b
    # the outermost loop of this frame in a later run that keeps the setting: the `if` may sit in
    # the first run of an inner loop (`for data in loader:`) inside the second run of an outer one
    # (`while step < max_step:`), and an inner loop's own entry already holds what the outer one's
    # earlier run carried in
    runs = {id(c[1]): c[4] for c in ip.st.ctx if c[0] == "loop"}
    if not any(runs.get(id(lp["node"])) for lp in loops):
        return a, b  # every loop of this frame is in its first run
    shape = settings.literal_nodes(test)
    item = _item_keyed(test, loops) if shape is None else None
    if shape is None and item is None:
        return a, b
    later = None
    for i, lp in enumerate(loops):
        node = lp["node"]
        if not runs.get(id(node)) or "entry" not in lp:
            continue
        if item is not None:
            if i > item:
                break
        elif counter_like(test, node) or any(attr_key(lit) in rebound(node) for lit in shape or ()):
            continue  # the loop changes the setting itself
        later = lp
        break
    if later is None:
        return a, b
    entry = later["entry"]
    out = []
    for mine, other in ((a, b), (b, a)):
        fixed = None
        for n, v in mine.items():
            if v is not env.get(n) or other.get(n) is env.get(n) or not recording.stale_saves(ip, v):
                continue
            # left by this arm, assigned by the other, and holding an earlier iteration's graph
            if fixed is None:
                fixed = dict(mine)
            if n in entry:
                fixed[n] = entry[n]
            else:
                del fixed[n]
        out.append(mine if fixed is None else fixed)
    return out[0], out[1]


def _item_keyed(test, loops) -> int | None:
    """`"k" in batch` (or `not in`), `batch` the target of one of the frame's loops that never stores
    into it: the index of that loop. A data loader's batches hold the same keys from one to the next
    (one collate function makes them all), so the test keeps its truth there like a setting."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.In, ast.NotIn))
        and isinstance(test.left, ast.Constant)
        and isinstance(test.left.value, str)
        and isinstance(test.comparators[0], ast.Name)
    ):
        return None
    name = test.comparators[0].id
    for i, lp in enumerate(loops):
        node = lp["node"]
        if isinstance(node, ast.For) and name in {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}:
            return None if name in _subscript_stored(node) else i
    return None


def _subscript_stored(loop) -> frozenset:
    """The names the loop stores or deletes an item of (`batch["k"] = v`), kept on the node (asked
    at every undecided `if` of a later run)."""
    found = getattr(loop, "_gradaudit_item_stores", None)
    if found is None:
        found = frozenset(
            n.value.id
            for n in ast.walk(loop)
            if isinstance(n, ast.Subscript)
            and isinstance(n.ctx, (ast.Store, ast.Del))
            and isinstance(n.value, ast.Name)
        )
        loop._gradaudit_item_stores = found
    return found


# lifecycle calls, and an optimizer's construction (`if batches_seen == 0: optimizer = Adam(...)`,
# DCRNN's rebuild once its lazily made parameters exist)
_LIFECYCLE = re.compile(
    r"\.(?:step|zero_grad)\(|\bbackward\(|\boptim\.[A-Z]\w*\("
    r"|\b(?:Adam|AdamW|SGD|RMSprop|Adagrad|Adadelta|Adamax|NAdam|RAdam|LBFGS)\("
)


def _varies_per_iteration(ip: Interp, stmt) -> bool:
    """An `if` in a loop whose test reads what the loop changes (`if not is_accumulating:` after
    `iter_num += 1; is_accumulating = iter_num % k != 0`, litgpt) and that guards a lifecycle call:
    the value the test has in the one or two iterations the engine runs is no answer for the
    others, so both arms run. Only for those: deciding every such test made whole checkpointing
    branches run (a LoRA trainer's `if global_step % save_steps == 0:` walking every module)."""
    loops = ip.st.stack[-1].loops
    if not loops:
        return False
    hit = getattr(stmt, "_gradaudit_varies", None)
    if hit is None:
        lines = ip.st.sf.lines[stmt.lineno - 1 : stmt.end_lineno]
        hit = stmt._gradaudit_varies = bool(_LIFECYCLE.search("\n".join(lines)))
    return hit and counter_like(stmt.test, loops[-1]["node"])


def _modulo_one(ip: Interp, test, env) -> bool:
    """`(step + 1) % accumulation_steps == 0` with accumulation_steps = 1: the same truth at every
    iteration (every integer is a multiple of 1), so the engine's answer holds for all of them."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    sides = [s for s in (test.left, test.comparators[0]) if isinstance(s, ast.BinOp) and isinstance(s.op, ast.Mod)]
    if len(sides) != 1:
        return False
    c = ip.eval(sides[0].right, env).const
    return type(c) is int and c in (1, -1)


def _s_if(ip: Interp, stmt, env):
    tail = _dispatch_tail(stmt)
    if tail is not None:
        setattr(tail, _TAIL, True)
    test = ip.eval(stmt.test, env)
    known = truth(test)
    if known is not None and _varies_per_iteration(ip, stmt) and not _modulo_one(ip, stmt.test, env):
        known = None
    if known is None:
        known = flags.assumed(ip, stmt.test)
    if known is True:
        return ip.exec_block(stmt.body, env)
    if known is False:
        return ip.exec_block(stmt.orelse, env)
    # what the arms assume of a flag-like test; `flags.assumed` checks it is a flag when asked
    frame = ip.st.stack[-1]
    saved = None
    ip.st.cond += 1
    key = ip.seq()
    ip.st.cond_starts.append(key)
    ip.st.cond_oids.append(next_oid())
    depth = len(ip.st.ctx)
    loops = ip.st.stack[-1].loops
    # whether the condition varies between iterations is decided later, for the few that guard
    # a lifecycle call (GA205)
    ip.st.trace.branch_tests[key] = (stmt.test, loops[-1]["node"] if loops else None)
    settings.note_test(ip, key, stmt.test, env)
    first: dict = {}
    ip.st.arm_stores.append(({}, first))
    n_backwards = [len(ip.st.trace.backwards)]
    arm_start = ip.st.cond_oids[-1]
    try:
        ip.st.path.append((key, 0, depth))
        saved = flags.assume(frame, stmt.test, True)  # a later test of the flag in this arm is decided
        guard = _guard_of(ip, frame, stmt)
        a = _exec_body(ip, frame, stmt.body, env, _guarded(guard, 1, _refine(stmt.test, env, True, ip)))
        n_backwards.append(len(ip.st.trace.backwards))
        ip.st.path[-1] = (key, 1, depth)
        ip.st.arm_stores[-1] = (first, {})
        flags.restore(frame, saved)
        saved = flags.assume(frame, stmt.test, False)
        b = (
            _exec_body(ip, frame, stmt.orelse, env, _guarded(guard, 2, _refine(stmt.test, env, False, ip)))
            if stmt.orelse
            else (None if getattr(stmt, _TAIL, False) else _guarded(guard, 2, _refine(stmt.test, env, False, ip)))
        )
    finally:
        flags.restore(frame, saved)
        ip.st.path.pop()
        ip.st.cond -= 1
        ip.st.cond_starts.pop()
        ip.st.cond_oids.pop()
        ip.st.arm_stores.pop()
    n_backwards.append(len(ip.st.trace.backwards))
    _freed_on_one_arm(ip, a, b, n_backwards, arm_start)
    a, b = _setting_arms(ip, stmt.test, env, a, b)
    merged = _join_envs(a, b)
    if merged is None:
        return None
    _note_guard(ip, frame, stmt, env, a, b, merged)
    if (a is None) != (b is None):
        # one arm left the block (return, continue, break, raise): what follows runs only on the other
        ip.st.path.append((key, 1 if a is None else 0, depth))
    _assign_env(env, merged)
    return env


def _freed_on_one_arm(ip: Interp, a: dict | None, b: dict | None, marks: list[int], start: int) -> None:
    """A backward() on one arm frees the graph it ran through; when no name holds that graph on that
    arm afterwards (the loss itself aside) but one does on the other arm, where nothing freed it,
    no path holds a freed graph (an update every T steps that detaches the carried state and resets
    the segment's lists before its backward: between updates they keep a live graph). Such saves
    are not taken as freed from here on. `start`: objects made from the `if` on have oids >= it."""
    if a is None or b is None or (marks[1] == marks[0] and marks[2] == marks[1]):
        return
    recs = ip.st.trace.backwards
    freed_a, losses_a = _freed_by(recs[marks[0] : marks[1]])
    freed_b, losses_b = _freed_by(recs[marks[1] : marks[2]])
    held_a = _held_by_names(a, {o for o in losses_a if o.oid >= start})
    held_b = _held_by_names(b, {o for o in losses_b if o.oid >= start})
    ip.st.trace.maybe_cleared |= ((held_b & freed_a) - freed_b - held_a) | ((held_a & freed_b) - freed_a - held_b)


def _freed_by(recs) -> tuple[set, set]:
    """What the backward() calls `recs` freed, and the storages of their losses."""
    freed: set = set()
    losses: set = set()
    for r in recs:
        if not r.retain and r.loss is not None:
            freed |= r.loss.saves
            losses |= r.loss.objs
    return freed, losses


def _held_by_names(env: dict, losses: set) -> set:
    """The saved tensors the names of `env` keep alive, but for a loss made and backpropagated on the
    arm (on the other arm the name holds an older loss, or nothing)."""
    out: set = set()
    for v in env.values():
        if isinstance(v, V) and not (v.objs and v.objs <= losses):
            out |= recording.held_saves(v)
    return out


def _s_for(ip: Interp, stmt, env):
    elems = _layer_elements(ip, stmt.iter, env)
    if elems is None:
        elems = _layer_indices(ip, stmt, env)
    if elems is None:
        elems = _counted(ip, stmt, env)
    if elems is not None:
        return _run_unrolled(ip, stmt, env, elems)
    elems = _named_modules(ip, stmt, env)
    if elems is not None:
        return _run_unrolled(ip, stmt, env, elems)
    it = ip.eval(stmt.iter, env)
    elems = _constant_elements(ip, it)
    if elems is None:
        elems = _named_parameters(ip, stmt, it)
    if elems is not None:
        return _run_unrolled(ip, stmt, env, elems)
    elem = ip.iter_value(it)
    if elem.saves and _several(it):
        # one element per iteration: the graph of each is its own (REINFORCE's log-probabilities of
        # separate forward passes), not one graph every iteration reaches again
        ip.st.trace.element_saves |= elem.saves
    return run_loop(ip, stmt, env, lambda e: assign(ip, stmt.target, elem, e, stmt))


# at most this many layers of a container module are run one by one (beyond: the joined loop)
_UNROLL = 48


def _children_of(v: V) -> list | None:
    """The children of the one container module `v` is (an nn.ModuleList / nn.Sequential), in order."""
    mods = v.of(ModuleObj)
    if len(mods) != 1 or v.objs - {mods[0]} or mods[0].spec not in T.CONTAINERS or mods[0].unordered:
        return None
    kids = list(mods[0].children.values())
    if not kids or len(kids) > _UNROLL or mods[0].opaque_unit is not None:
        return None
    return [module_value(c) if isinstance(c, ModuleObj) else unit_value(c) for c in kids]


def _layer_elements(ip: Interp, node, env) -> list | None:
    """The elements of `for layer in self.layers`, `enumerate(self.layers)`, `zip(self.a, self.b)` over
    container modules of known layers, one per iteration in order: a forward that runs layers of
    different kinds in turn (a conv, then an in-place ReLU) is not one joined layer run twice."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("enumerate", "zip"):
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not node.args:
            return None
        if node.func.id == "enumerate" and len(node.args) != 1:
            return None
        if not all(isinstance(a, (ast.Attribute, ast.Name, ast.Subscript)) for a in node.args):
            return None
        found = [_layers_of(ip, a, env) for a in node.args]
        seqs = [s for s, _ in found if s is not None]
        if len(seqs) != len(found):
            return None
        if node.func.id == "enumerate":
            if found[0][1]:
                # layers a comprehension made, run as one: the index of each is not known
                return [make_tuple([V(Kind.NUMBER), e], None) for e in seqs[0]]
            return [make_tuple([const(i), e], None) for i, e in enumerate(seqs[0])]
        n = min(len(s) for s in seqs)
        return [make_tuple([s[i] for s in seqs], None) for i in range(n)]
    if isinstance(node, (ast.Attribute, ast.Name, ast.Subscript)):
        return _layers_of(ip, node, env)[0]
    return _registry_elements(ip, node, env)


def _registry_elements(ip: Interp, node, env) -> list | None:
    """`for name, layer in vgg._modules.items()`, `vgg.named_children()`, `vgg.children()`: a
    module's children one per iteration, in registration order (joined, an in-place ReLU could
    seem to come first and change the network's input)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args):
        return None
    name, owner = node.func.attr, node.func.value
    if name in ("items", "values") and isinstance(owner, ast.Attribute) and owner.attr == "_modules":
        owner, named = owner.value, name == "items"
    elif name in ("children", "named_children"):
        named = name == "named_children"
    else:
        return None
    if not isinstance(owner, (ast.Attribute, ast.Name)):
        return None
    mods = ip.eval(owner, env).of(ModuleObj)
    if len(mods) != 1 or mods[0].unordered or mods[0].opaque_unit is not None:
        return None
    kids = [(k, c) for k, c in mods[0].children.items() if isinstance(c, ModuleObj)]
    if not 1 < len(kids) <= _UNROLL:
        return None
    if named:
        return [make_tuple([const(k) if isinstance(k, str) else V(Kind.STR), module_value(c)], None) for k, c in kids]
    return [module_value(c) for _, c in kids]


def _counted(ip: Interp, stmt, env) -> list | None:
    """`for _ in range(2): self.blocks.append(Block(c))` in a module's method: one
    iteration per element of a short constant range (expressions.known_sequence), so each
    iteration's objects are their own (two blocks, the second run after the first), not one
    joined block."""
    frame = ip.st.stack[-1]
    if frame.func is None or frame.self_v is None or not frame.self_v.of(ModuleObj) or not _constructs(stmt):
        return None  # only where a module builds its layers: elsewhere the joined loop is cheaper
    if trains(ip.st.sf, frame.func.node):
        return None
    elems = known_sequence(ip, stmt.iter, env)
    return elems if elems is not None and len(elems) > 1 else None


def _constructs(stmt) -> bool:
    """A loop body calling what its name says is a class (`Block(c)`, `nn.Linear(a, b)`)."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name[:1].isupper():
                return True
    return False


def _keyed_constant(e: V) -> bool:
    """A constant, or a pair led by one (an item of a dict whose keys are all known: mmcv's
    `parse_losses` walks `losses.items()` into `log_vars[name]`, then sums the ones named loss)."""
    if e.const is not NOCONST:
        return True
    return e.items is not None and len(e.items) == 2 and isinstance(e.items[0], V) and e.items[0].const is not NOCONST


def _constant_elements(ip: Interp, it: V) -> list | None:
    """The elements of a list or tuple of constants a function that does not train walks (`for v in
    cfg:` building VGG's layers from `[64, 64, "M", ...]`), one per iteration in order: the
    layers it makes are then known one by one, not as one joined layer."""
    items = it.items
    if items is None:
        lists = it.of(ListObj)
        if len(lists) != 1 or it.objs - {lists[0]} or lists[0].elems is None:
            return None
        items = lists[0].elems
    if not 1 < len(items) <= _UNROLL or not all(isinstance(e, V) and _keyed_constant(e) for e in items):
        return None
    frame = ip.st.stack[-1]
    if frame.func is None or trains(ip.st.sf, frame.func.node):
        return None
    return list(items)


# at most this many parameters are visited one by one by a freezing loop
_UNROLL_PARAMS = 1024


def _named_parameters(ip: Interp, stmt, it: V) -> list | None:
    """`for name, p in m.named_parameters(): if "head" not in name: p.requires_grad = False` in a
    function that does not train: one iteration per parameter with its name, in order, so that a
    filter on names freezes exactly the parameters it names (joined, every parameter was only
    maybe frozen). Only when every parameter's name is known (no module the engine cannot see)."""
    pis = it.of(PIter)
    if len(pis) != 1 or it.objs - {pis[0]} or not pis[0].named or not pis[0].exact or len(pis[0].sources) != 1:
        return None
    if not (isinstance(stmt.target, ast.Tuple) and len(stmt.target.elts) == 2):
        return None
    frame = ip.st.stack[-1]
    if frame.func is None or trains(ip.st.sf, frame.func.node):
        return None
    src = next(iter(pis[0].sources))
    if not isinstance(src, ModuleObj):
        return None
    named = _names_of_parameters(src)
    if named is None or not 0 < len(named) <= _UNROLL_PARAMS:
        return None
    return [make_tuple([const(name), unit_value(u)], None) for name, u in named]


# at most this many modules are visited one by one by a loop over `named_modules()`
_UNROLL_MODULES = 512


def _named_modules(ip: Interp, stmt, env) -> list | None:
    """`for k, v in model.named_modules(): if hasattr(v, "bias") and isinstance(v.bias,
    nn.Parameter): pg2.append(v.bias) ...` (the parameter groups of yolov5 and its descendants),
    in a loop that does not train: one iteration per module with its name, in the order torch
    yields them, so that each group holds exactly the parameters its tests pick (joined, every
    group held any module's weight, and parameters no test picks, an attention's
    `in_proj_weight`, were never seen missing). Only when the whole tree is in sight."""
    call = stmt.iter
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("named_modules", "modules")
        and not call.args
        and not call.keywords
    ):
        return None
    named = call.func.attr == "named_modules"
    if named != (isinstance(stmt.target, ast.Tuple) and len(stmt.target.elts) == 2) or trains(ip.st.sf, stmt):
        return None
    recv = ip.eval(call.func.value, env)
    mods = recv.of(ModuleObj)
    if len(mods) != 1 or recv.objs - {mods[0]}:
        return None
    out: list = []
    seen: set = set()
    stack = [("", mods[0])]
    while stack:
        prefix, mod = stack.pop()
        if mod.oid in seen:
            continue
        if len(out) >= _UNROLL_MODULES:
            return None
        seen.add(mod.oid)
        value = module_value(mod)
        out.append(make_tuple([const(prefix), value], None) if named else value)
        kids = [(f"{prefix}.{k}" if prefix else str(k), c) for k, c in mod.children.items() if isinstance(c, ModuleObj)]
        stack.extend(reversed(kids))
    return out


def _names_of_parameters(m: ModuleObj) -> list | None:
    """(name, leaf) as `m.named_parameters()` yields them (depth first, shared ones once), or None
    when some are out of sight (a module the engine cannot see into) or there are too many."""
    out: list = []
    seen: set = set()
    stack = [("", m)]
    while stack:
        prefix, mod = stack.pop()
        if mod.oid in seen:
            continue
        seen.add(mod.oid)
        if mod.opaque_unit is not None:
            return None
        kids = []
        for key, child in mod.children.items():
            if isinstance(child, Unit):
                if child.oid not in seen:
                    seen.add(child.oid)
                    if child.kind != Unit.PARAM:
                        return None
                    out.append((prefix + str(key), child))
            elif isinstance(child, ModuleObj):
                kids.append((prefix + str(key) + ".", child))
        stack.extend(reversed(kids))
        if len(out) > _UNROLL_PARAMS:
            return None
    return out


def _layer_indices(ip: Interp, stmt, env) -> list | None:
    """The indices of `for k in range(a, b): x = self.vgg[k](x)`, constant bounds, when the body
    indexes a container module of known layers with `k`: one iteration per index, in order (SSD's
    VGG runs convs, in-place ReLUs and pools in turn, never one joined layer)."""
    it, target = stmt.iter, stmt.target
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and isinstance(target, ast.Name)
        and 1 <= len(it.args) <= 3
        and not it.keywords
    ):
        return None
    indexed = _indexed_by(stmt, target.id)
    if not indexed or BUILTINS.get("range") is not ip.eval(it.func, env):
        return None
    bounds = [ip.eval(a, env).const for a in it.args]
    if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
        return None
    indices = range(*bounds)
    if not 0 < len(indices) <= _UNROLL:
        return None
    if not any(_children_of(ip.eval(node, env)) is not None for node in indexed):
        return None
    return [const(i) for i in indices]


def _indexed_by(stmt, name: str) -> list:
    """The containers the loop's body indexes with `name` alone (`self.vgg[k]`), cached on the loop."""
    found = getattr(stmt, "_ga_indexed", None)
    if found is None:
        found = []
        for n in ast.walk(ast.Module(body=stmt.body, type_ignores=[])):
            if (
                isinstance(n, ast.Subscript)
                and isinstance(n.slice, ast.Name)
                and n.slice.id == name
                and isinstance(n.value, (ast.Attribute, ast.Name))
            ):
                found.append(n.value)
        stmt._ga_indexed = found
    return found


def _summary(v: V) -> bool:
    return any(m.summary for m in v.of(ModuleObj))


def _layers_of(ip: Interp, node, env) -> tuple[list | None, bool]:
    """The layers `self.lins` or `self.lins[:-1]` (constant bounds) names, in order; and whether
    they stand for an unknown number of layers (a comprehension's, ModuleObj.summary)."""
    if isinstance(node, ast.Subscript):
        sl = node.slice
        if not isinstance(sl, ast.Slice) or not isinstance(node.value, (ast.Attribute, ast.Name)):
            return None, False
        bounds: list[int | None] = []
        for part in (sl.lower, sl.upper, sl.step):
            if part is None:
                bounds.append(None)
                continue
            c = ip.eval(part, env).const
            if not isinstance(c, int) or isinstance(c, bool):
                return None, False
            bounds.append(c)
        container = ip.eval(node.value, env)
        if _summary(container):
            return None, True  # a slice of layers whose number is not known
        kids = _children_of(container)
        return (kids[slice(*bounds)] if kids is not None else None), False
    container = ip.eval(node, env)
    return _children_of(container), _summary(container)


def _run_unrolled(ip: Interp, stmt, env, elems):
    """A loop over known layers, one iteration per layer in order (breaks and continues joined)."""
    frame = ip.st.stack[-1]
    loop = {"node": stmt, "breaks": [], "continues": []}
    frame.loops.append(loop)
    outer_ctx = ip.st.ctx
    head: dict | None = env
    exits = []
    try:
        for i, e in enumerate(elems):
            if head is None:
                break
            ip.st.ctx = outer_ctx + (("loop", stmt, ip.seq(), ip.st.sf, i, next_oid()),)
            body_env = dict(head)
            assign(ip, stmt.target, e, body_env, stmt)
            out = _exec_body(ip, frame, stmt.body, head, body_env)
            ends = [x for x in [out] + loop["continues"] if x is not None]
            loop["continues"] = []
            exits.extend(loop["breaks"])
            loop["breaks"] = []
            head = None
            for x in ends:
                head = _join_envs(head, x)
    finally:
        ip.st.ctx = outer_ctx
        frame.loops.pop()
    after = ip.exec_block(stmt.orelse, head) if stmt.orelse and head is not None else head
    for x in exits:
        after = _join_envs(after, x)
    if after is None:
        return None
    if after is not env:
        _assign_env(env, after)
    return env


def _s_while(ip: Interp, stmt, env):
    test = ip.eval(stmt.test, env)
    if truth(test) is False:
        return ip.exec_block(stmt.orelse, env)
    return run_loop(ip, stmt, env, lambda e: ip.eval(stmt.test, e))


def run_loop(ip: Interp, stmt, env, bind):
    frame = ip.st.stack[-1]
    # `entry`: the names as the loop found them (what a setting's untaken arm leaves, every iteration)
    loop = {"node": stmt, "breaks": [], "continues": [], "entry": dict(env)}
    frame.loops.append(loop)
    head = env
    outer_ctx = ip.st.ctx
    # a second run shows what one iteration hands to the next (carried state); building a
    # module's structure in __init__ needs only one
    runs = _LOOP_RUNS if _loop_depth(ip) < 4 and not ip.st.init_stack and not _no_graph_loop(ip, stmt) else 1
    handed, always = carried(stmt) if runs > 1 else (frozenset(), False)
    watched = {n: head.get(n) for n in handed}
    writes = ip.st.graph_writes
    exits = []
    started = ip.st.steps
    entry_graphs: dict[str, V] = {}
    sources: dict[str, frozenset] = {}  # the carried names' gradient sources after the last run
    run = -1
    try:
        while run + 1 < runs:
            run += 1
            if ip.st.steps > ip.st.budget and (run or not ip.st.gaps.reserve(stmt, ip.st, trains)):
                if not run:
                    ip.st.gaps.loop_cut(stmt, ip.st.sf)
                break
            ip.st.gaps.loop_ran(stmt)
            if (
                run
                and not always
                and all(head.get(n) is v for n, v in watched.items())
                and ip.st.graph_writes == writes
            ):
                # nothing one iteration hands to the next came back changed (names, or graph kept
                # in older objects by called code): a second run would repeat the first
                break
            if run and not _affordable(ip, ip.st.steps - started):
                # a second run the budget cannot pay for whole would stop partway, and leave the
                # state of half an iteration (a model frozen for the D step and never unfrozen for
                # the G step) as the loop's outcome: the first run's state is the better answer
                break
            started = ip.st.steps
            writes = ip.st.graph_writes
            # the iteration is identified by the sequence number at its start (what is made
            # later, in this iteration or after, has a larger one) and by the object-id mark
            ip.st.ctx = outer_ctx + (("loop", stmt, ip.seq(), ip.st.sf, run, next_oid()),)
            body_env = dict(head)
            bind(body_env)
            out = _exec_body(ip, frame, stmt.body, head, body_env)
            ends = [e for e in [out] + loop["continues"] if e is not None]
            loop["continues"] = []
            exits.extend(loop["breaks"])
            loop["breaks"] = []
            merged = head
            for e in ends:
                merged = _join_envs(merged, e)
            if run + 1 == runs and 1 <= run < _LOOP_RUNS_MAX - 1 and ip.st.steps - started <= _CHEAP_RUN:
                grown = _sources(merged, handed)
                if grown != sources:
                    runs += 1  # the carried values gained gradient sources this run: not settled yet
                sources = grown
            elif run == 0:
                sources = _sources(merged, handed)
            renewed = _renewed_graphs(head, ends) if run + 1 < runs else {}
            if merged is not head:
                _assign_env(head, merged)
            for n, (before, now) in renewed.items():
                # the next iteration starts from what this one left, never from what the loop found
                head[n] = now
                entry_graphs.setdefault(n, before)
    finally:
        ip.st.ctx = outer_ctx
        frame.loops.pop()
    for n, before in entry_graphs.items():
        if n in head:
            ip.st.trace.empty_loop_saves.update(before.saves - head[n].saves)
            head[n] = join(head[n], before)  # the loop may run no iteration at all
    after = ip.exec_block(stmt.orelse, head) if stmt.orelse else head
    for e in exits:
        after = _join_envs(after, e)
    if after is None:
        return None
    if after is not env:
        _assign_env(env, after)
    return env


def _sources(env: dict, names) -> dict[str, frozenset]:
    """The gradient sources (parameters reached, strongly or weakly) of the carried names."""
    out = {}
    for n in names:
        v = env.get(n)
        if isinstance(v, V) and (v.org or v.weak):
            out[n] = v.org | v.weak
    return out


def _renewed_graphs(head: dict, ends: list[dict]) -> dict[str, tuple[V, V]]:
    """Names that held a graph when the iteration began and that every way through the iteration
    assigned afresh (`outputs = model(inputs)` at the end of an attack step, for the next one):
    name -> (the value before, the join of the new ones). The next iteration reads only the new
    ones; joined with the old, a graph an earlier backward() freed would look reused."""
    out: dict[str, tuple[V, V]] = {}
    if not ends:
        return out
    for n, before in head.items():
        if not isinstance(before, V) or not before.saves:
            continue
        now = None
        for e in ends:
            v = e.get(n)
            if v is None or v is before or not isinstance(v, V):
                break
            now = v if now is None else join(now, v)
        else:
            if now is not None:
                out[n] = (before, now)
    return out


def _affordable(ip: Interp, cost: int) -> bool:
    """`cost` more statements stay within every budget running now."""
    st = ip.st
    end = st.steps + cost
    return end <= st.budget and end - st.root_start <= st.root_budget and not (st.caps and end > min(st.caps)[0])


def _no_graph_loop(ip: Interp, stmt) -> bool:
    """A loop run with grad mode off and no training call in it (an evaluation loop): it builds no
    graph, so no iteration hands one to the next, and a second run would show nothing new."""
    return ip.st.nograd is not None and not trains(ip.st.sf, stmt)


def _exec_body(ip: Interp, frame, body, head: dict, body_env: dict):
    """A loop body or an arm of an undecided `if`; at module level its bindings are the globals the
    functions it calls read (`if args.train: model = Net(); train()`, with `train` reading `model`)."""
    if frame.func is not None or frame.scope is None:
        return ip.exec_block(body, body_env)
    key = id(frame.scope.globals)
    prev = ip.st.live_globals.get(key)
    ip.st.live_globals[key] = body_env
    try:
        return ip.exec_block(body, body_env)
    finally:
        if prev is None:
            ip.st.live_globals.pop(key, None)
        else:
            ip.st.live_globals[key] = prev


def _several(it: V) -> bool:
    """`it` is a container of several elements the engine joined into one value."""
    if it.items is not None:
        return len(it.items) > 1
    lists = it.of(ListObj)
    return len(lists) > 1 or any(o.elems is None or len(o.elems) > 1 for o in lists)


def _loop_depth(ip: Interp) -> int:
    return sum(1 for c in ip.st.ctx if c[0] == "loop")


def _s_break(ip: Interp, stmt, env):
    loops = ip.st.stack[-1].loops
    if loops:
        loops[-1]["breaks"].append(dict(env))
    return None


def _s_continue(ip: Interp, stmt, env):
    loops = ip.st.stack[-1].loops
    if loops:
        loops[-1]["continues"].append(dict(env))
    return None


def _s_return(ip: Interp, stmt, env):
    value = ip.eval(stmt.value, env) if stmt.value is not None else NONE
    if ip.st.casts:
        value = ip.sem.store(ip, value)
    ip.st.stack[-1].returns.append(value)
    return None


def _s_raise(ip: Interp, stmt, env):
    if stmt.exc is not None:
        ip.eval(stmt.exc, env)
    return None


def _s_try(ip: Interp, stmt, env):
    start = dict(env)
    body = ip.exec_block(stmt.body, env)
    if body is not None and stmt.orelse:
        body = ip.exec_block(stmt.orelse, body)
    outs = [body]
    if stmt.handlers:
        ip.st.cond += 1
        key = ip.seq()
        ip.st.cond_starts.append(key)
        ip.st.cond_oids.append(next_oid())
        try:
            for i, h in enumerate(stmt.handlers):
                henv = dict(start) if body is None else _join_envs(start, body) or {}
                if h.name:
                    henv[h.name] = UNKNOWN
                ip.st.path.append((key, i + 1, len(ip.st.ctx)))
                try:
                    outs.append(ip.exec_block(h.body, henv))
                finally:
                    ip.st.path.pop()
        finally:
            ip.st.cond -= 1
            ip.st.cond_starts.pop()
            ip.st.cond_oids.pop()
    merged = None
    for o in outs:
        merged = _join_envs(merged, o) if merged is not None else (dict(o) if o is not None else None)
    if stmt.finalbody:
        fin = ip.exec_block(stmt.finalbody, merged if merged is not None else dict(start))
        if merged is None or fin is None:
            return None
        merged = fin
    if merged is None:
        return None
    _assign_env(env, merged)
    return env


def _s_funcdef(ip: Interp, stmt, env):
    fn = make_function(ip, stmt, env)
    made = apply_decorators(ip, fn, stmt, env)
    env[stmt.name] = V(Kind.FUNC, frozenset((made,))) if made is not None else UNKNOWN
    return env


def _binding(ip: Interp, name: str, env: dict):
    """What a name is bound to, without forcing a lazy import."""
    for scope_env in (env,) + ip.st.stack[-1].closure + (ip.st.stack[-1].scope.globals,):
        v = scope_env.get(name)
        if v is not None:
            return v
    return BUILTINS.get(name)


_GRAD_MODE_NAME = re.compile(r"grad|inference", re.IGNORECASE)


def _one_function(wrappers: list) -> bool:
    """Several wrappers a decorator may return that are one function run the same way: yolov5's
    `(torch.inference_mode if new else torch.no_grad)()(fn)` gives `fn` with grad off either way."""
    first = wrappers[0]
    return all(
        w.node is first.node and (w.nograd is None) == (first.nograd is None) and w.grad_on == first.grad_on
        for w in wrappers
    )


def apply_decorators(ip: Interp, fn: FuncObj, stmt, env) -> FuncObj | None:
    """Record what decorators mean for the function, and apply the project's own: the function the
    name is bound to (a decorator's wrapper, `@singleton("projector")`), or None when it is no longer
    a plain function."""
    made = fn
    for dec in reversed(stmt.decorator_list):  # the innermost is applied first
        lift = False
        root = dec.func if isinstance(dec, ast.Call) else dec
        while isinstance(root, (ast.Attribute, ast.Call)):
            root = root.value if isinstance(root, ast.Attribute) else root.func
        if isinstance(root, ast.Name):
            bound = _binding(ip, root.id, env)
            # a project's own grad-mode decorator (yolov5's `@smart_inference_mode()` from
            # utils/torch_utils.py): whether the function records a graph depends on it, so it is
            # loaded even where an imported module's top level leaves lazy imports alone
            lift = bound is not None and bool(bound.k & Kind.LAZY) and bool(_GRAD_MODE_NAME.search(root.id))
            if (bound is None or bound.k & Kind.LAZY) and not lift:
                # a project decorator not loaded yet (docstring helpers, registries...): taken
                # to return the function; loading its module for that is not worth it
                if isinstance(dec, ast.Attribute) and dec.attr in ("setter", "getter", "deleter"):
                    return None
                continue
        if lift:
            held, ip.st.no_force = ip.st.no_force, False
            try:
                d = ip.eval(dec, env)
            finally:
                ip.st.no_force = held
        else:
            d = ip.eval(dec, env)
        dq = d.const if d.k & Kind.MODREF else None
        ctxs = d.of(CtxObj)
        if dq in T.NOGRAD_CTX or (ctxs and ctxs[0].kind == "nograd"):
            made.nograd = Site(ip.st.sf, dec)
        elif dq in T.GRAD_CTX or (ctxs and ctxs[0].kind == "grad"):
            made.grad_on = True  # a gradient pass inside a no_grad sampler (guidance, attacks)
        elif ctxs and ctxs[0].kind == "other":
            made.grad_on = None
        elif dq in ("contextlib.contextmanager", "contextlib.asynccontextmanager"):
            made.entry = _context_entry(made)
        elif dq == "builtins.staticmethod":
            made.is_static = True
        elif dq == "builtins.classmethod":
            made.is_classmethod = True
        elif isinstance(dec, ast.Attribute) and dec.attr in ("setter", "getter", "deleter"):
            return None
        elif d.objs and all(isinstance(o, FuncObj) for o in d.objs) and not d.k & Kind.MODREF:
            # a decorator the project defines: what it returns is what the name holds, when that is a
            # function the engine can run (a wrapper); anything else leaves the function as it is
            out = calls.call_value(ip, d, [V(Kind.FUNC, frozenset((made,)))], {}, dec, env)
            wrappers = out.of(FuncObj)
            if wrappers and out.objs == set(wrappers) and _one_function(wrappers):
                made = wrappers[0]
    return made


def _context_entry(fn: FuncObj) -> FuncObj | None:
    """The part of a @contextmanager generator a `with` runs on entry: the statements before its
    `yield` (at the top of the body, or at the top of a `try` there), returning what it yields.
    What follows the `yield` (a restore on exit) is not run: the with block is what matters."""
    body = fn.node.body
    for i, stmt in enumerate(body):
        if (value := _yielded(stmt)) is not None:
            prefix = body[:i]
            break
        if isinstance(stmt, ast.Try):
            inner = next(((j, y) for j, s in enumerate(stmt.body) if (y := _yielded(s)) is not None), None)
            if inner is not None:
                value, prefix = inner[1], body[:i] + stmt.body[: inner[0]]
                break
    else:
        return None
    ret = ast.Return(value=value.value)
    ast.copy_location(ret, prefix[-1] if prefix else fn.node)
    node = ast.FunctionDef(name=fn.node.name, args=fn.node.args, body=[*prefix, ret], decorator_list=[], returns=None)
    if hasattr(fn.node, "type_params"):
        setattr(node, "type_params", [])  # noqa: B010 (Python 3.12 on; not in 3.10-3.11 stubs)
    ast.copy_location(node, fn.node)
    node.end_lineno, node.end_col_offset = fn.node.end_lineno, fn.node.end_col_offset
    entry = FuncObj(node, fn.scope, fn.closure, fn.qual, fn.cls)
    entry.def_env = fn.def_env
    entry.defaults = fn.defaults
    return entry


def _yielded(stmt) -> ast.Yield | None:
    """The `yield` of a statement `yield x` / `v = yield x`; None for any other statement."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    return value if isinstance(value, ast.Yield) else None


def _base_value(ip: Interp, base, env) -> V:
    """A class's base as written: `mod.Name` of a project module imported but not run yet (a base
    in another file, `class CausalSelfAttention(llama.CausalSelfAttention)`) is read now, as Python
    reads it when the class statement runs (later, a context manager may have rebound the name to
    this very class), rather than taken as unknown."""
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        v = _binding(ip, base.value.id, env)
        if v is not None and v.k & Kind.LAZY and ip.st.no_force:
            ip.st.no_force = False
            try:
                v = ip.force(v)
            finally:
                ip.st.no_force = True
            return ip.get_attr(v, base.attr, base, env)
    return ip.eval(base, env)


def make_function(ip: Interp, node, env, cls=None) -> FuncObj:
    frame = ip.st.stack[-1]
    closure = (env,) + frame.closure if frame.func is not None else ()
    qual = node.name if frame.func is None else f"{frame.func.qual}.<locals>.{node.name}"
    if cls is not None:
        qual = f"{cls.name}.{node.name}"
    fn = FuncObj(node, frame.scope, closure, qual, cls)
    fn.defaults = None
    fn.def_env = env  # defaults are evaluated at the first call: most functions are never called
    return fn


def _s_classdef(ip: Interp, stmt, env):
    cls = ClassObj(stmt, ip.st.stack[-1].scope, stmt.name)
    cls.base_values = [_base_value(ip, b, env) for b in stmt.bases]
    cls.resolver = functools.partial(resolve_class, ip)
    cenv: dict = {}
    frame = Frame(None, ip.st.stack[-1].scope, (), None, frozenset(), cls=cls, label=stmt.name)
    ip.st.stack.append(frame)
    try:
        for item in stmt.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ip.st.stack.pop()
                try:
                    fn = make_function(ip, item, env, cls=cls)
                finally:
                    ip.st.stack.append(frame)
                made = apply_decorators(ip, fn, item, env)
                if made is not None and not _is_property_setter(item):
                    cls.methods[item.name] = made
                    if any(isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list):
                        cls.class_attrs[item.name] = V(Kind.FUNC, frozenset((made,)), const="property")
            elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                value = ip.eval(item.value, cenv) if item.value is not None else None
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                if value is not None:
                    for t in targets:
                        if isinstance(t, ast.Name):
                            cls.class_attrs[t.id] = value
                            cenv[t.id] = value
    finally:
        ip.st.stack.pop()
    value = env[stmt.name] = V(Kind.CLASS, frozenset((cls,)))
    for deco in reversed(stmt.decorator_list):
        _register_class(ip, deco, value, env)
    return env


def _register_class(ip: Interp, deco, value: V, env) -> None:
    """Run a class decorator that is a function of the project (`@register("unet")`, filling a dict
    a factory later reads: `_MODULES[name]()`), for what it records; the class stays what the name
    binds. Decorators of libraries (`@dataclass`) and attributes (`@MODELS.register_module()`, read
    by libraries/registries.py) are left alone."""
    callee = deco.func if isinstance(deco, ast.Call) else deco
    if not isinstance(callee, ast.Name):
        return
    found = env.get(callee.id)
    if found is None and ip.st.stack:
        found = ip.lookup_global(ip.st.stack[-1].scope.globals, callee.id)
    if found is None or not found.of(FuncObj):
        return
    fn = ip.eval(deco, env) if isinstance(deco, ast.Call) else found
    if fn.of(FuncObj):
        ip.call_value(fn, [value], {}, deco, env)


def resolve_class(ip: Interp, cls: ClassObj):
    """Settle what a class's bases make it; bases imported lazily are forced now."""
    saved, ip.st.no_force = ip.st.no_force, False
    try:
        _resolve_bases(ip, cls)
    finally:
        ip.st.no_force = saved


def _resolve_bases(ip: Interp, cls: ClassObj):
    for bv in cls.base_values:
        if bv.k & Kind.LAZY:
            bv = ip.force(bv)
        for o in bv.of(ClassObj):
            cls.bases.append(o)
            cls.is_module |= o.is_module
            cls.opaque_base |= o.opaque_base
            cls.is_optimizer |= o.is_optimizer
            cls.is_scheduler |= o.is_scheduler
        if bv.k & Kind.MODREF and isinstance(bv.const, str) and not bv.objs:
            q = T.strip_torch_alias(bv.const)
            cls.bases.append(q)
            short = q.rsplit(".", 1)[-1]
            lib = ip.sem.class_base(ip, q) if not q.startswith(("torch.", "builtins.")) else None
            if q == "torch.nn.Module" or short == "LightningModule" or lib == "base":
                cls.is_module = True
            elif lib == "module" or (
                q.startswith("torch.nn.")
                and (
                    short in T.PARAM_MODULES or short in T.FREE_MODULES or short in T.CONTAINERS or short in T.RECURRENT
                )
            ):
                cls.is_module = True
                cls.opaque_base = True
            elif q in ("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer") or (
                q.startswith("torch.optim.") and short in T.OPTIMIZERS
            ):
                # an optimizer of the project's own, or one varying torch's (aihwkit's `AnalogSGD(SGD)`)
                cls.is_optimizer = True
            elif q.startswith("torch.optim.lr_scheduler.") and (
                short in T.SCHEDULERS or short in ("_LRScheduler", "LRScheduler")
            ):
                # a warmup schedule of the project's own (`class WarmupMultiStepLR(_LRScheduler)`)
                cls.is_scheduler = True
            elif q.startswith("torch.utils.data"):
                pass  # a Dataset: not a base the engine cannot see
            elif q.startswith("builtins.") or q in (
                "abc.ABC",
                "typing.Generic",
                "enum.Enum",
                "typing.NamedTuple",
                "object",
            ):
                pass
            else:
                cls.opaque_base = True
        elif not bv.objs and bv.k & Kind.UNKNOWN:
            cls.opaque_base = True
    if not cls._is_module and cls._opaque_base and "forward" in cls.methods:
        cls.is_module = True


def _s_import(ip: Interp, stmt, env):
    for alias in stmt.names:
        if alias.asname:
            env[alias.asname] = import_module(ip, alias.name, 0, stmt)
        else:
            top = alias.name.split(".")[0]
            env[top] = import_module(ip, top, 0, stmt)
    return env


def _s_importfrom(ip: Interp, stmt, env):
    module = stmt.module or ""
    level = stmt.level or 0
    path = ip.st.program.resolve(ip.st.sf, module, level) if (level or module) else None
    if path is None and module and ip.library is None:
        path = ip.st.program.resolve_fallback(ip.st.sf, module, level, stmt)
    for alias in stmt.names:
        name = alias.asname or alias.name
        qualified = ip.st.program.qualified_import(ip.st.sf, module, level, alias.name)
        if qualified is not None:
            env[name] = V(Kind.MODREF, const=T.strip_torch_alias(qualified))
            continue
        if alias.name == "*":
            if path is not None:
                # names come from the module when first looked up (see lookup_global)
                lazy = LazyImport(path, module, None)
                old = env.get(STAR)
                env[STAR] = V(Kind.LAZY, (old.objs if old is not None else EMPTY) | {lazy})
            continue
        if path is not None:
            # project modules run lazily, when the name is first used: most imports never matter
            env[name] = V(Kind.LAZY, frozenset((LazyImport(path, module, alias.name),)))
        elif (sub := _own_submodule(ip, module, level, alias.name)) is not None:
            base = ip.st.program.absolute_module(ip.st.sf, module, level)
            env[name] = V(
                Kind.LAZY, frozenset((LazyImport(sub, f"{base}.{alias.name}" if base else alias.name, None),))
            )
        elif (sub := _namespace_module(ip, module, level, alias.name)) is not None:
            env[name] = V(
                Kind.LAZY, frozenset((LazyImport(sub, f"{module}.{alias.name}" if module else alias.name, None),))
            )
        else:
            base = module if not level else ip.st.program.absolute_module(ip.st.sf, module, level)
            env[name] = V(Kind.MODREF, const=T.strip_torch_alias(f"{base}.{alias.name}" if base else alias.name))
    return env


def _own_submodule(ip: Interp, module: str, level: int, name: str) -> str | None:
    """`from . import losses` in a package's own `__init__.py` (auraloss's `from . import freq, time`):
    the package's `losses.py` (or `losses/`), which `pkg.losses` then names."""
    if level != 1 or module or name == "*" or not ip.st.sf.abspath.endswith("__init__.py"):
        return None
    return ip.st.program.submodule(ip.st.sf.abspath, name)


def _namespace_module(ip: Interp, module: str, level: int, name: str) -> str | None:
    """`from pkg import mod` (or `from . import mod`) where `pkg` is a folder without `__init__.py`,
    a namespace package: the project's `pkg/mod.py`."""
    if not (level or module) or name == "*" or not ip.st.program.namespace_package(ip.st.sf, module, level):
        return None
    return ip.st.program.resolve(ip.st.sf, f"{module}.{name}" if module else name, level)


def _s_delete(ip: Interp, stmt, env):
    for t in stmt.targets:
        if isinstance(t, ast.Name):
            env.pop(t.id, None)
        elif (
            isinstance(t, ast.Subscript)
            and isinstance(t.slice, ast.Slice)
            and t.slice.lower is None
            and t.slice.upper is None
        ):
            for o in ip.eval(t.value, env).of(ListObj):
                clear_list(ip, o)  # `del lst[:]`
    return env


def _s_pass(ip: Interp, stmt, env):
    return env


def _s_match(ip: Interp, stmt, env):
    ip.eval(stmt.subject, env)
    outs = []
    ip.st.cond += 1
    ip.st.cond_starts.append(ip.seq())
    ip.st.cond_oids.append(next_oid())
    try:
        for case in stmt.cases:
            outs.append(ip.exec_block(case.body, dict(env)))
    finally:
        ip.st.cond -= 1
        ip.st.cond_starts.pop()
        ip.st.cond_oids.pop()
    outs.append(dict(env))
    merged = None
    for o in outs:
        merged = _join_envs(merged, o) if merged is not None else (dict(o) if o is not None else None)
    if merged is None:
        return None
    _assign_env(env, merged)
    return env


def assign(ip: Interp, target, value: V, env: dict, stmt):
    if ip.st.casts:
        value = ip.sem.store(ip, value)
    if isinstance(target, ast.Name):
        bind_name(ip, target.id, value, env, stmt)
    elif isinstance(target, ast.Attribute):
        recv = ip.eval(target.value, env)
        if _parks_an_object(recv, value, target) and env is not None:
            # `args = parser.parse_args(); args.discriminator = Discriminator(args)`: an object parked on
            # what a call the engine does not follow returned (a namespace, a config) is read back
            # from it (`args.discriminator.adv_loss(...)`): the name now holds a symbol keeping it
            assert isinstance(target.value, ast.Name)
            sym = SymObj(target.value.id, Site(ip.st.sf, stmt), ip.seq())
            recv = recv.replace(objs=frozenset((sym,)))
            bind_name(ip, target.value.id, recv, env, stmt, rebind_check=False)
        ip.set_attr(recv, target.attr, value, stmt, target, env)
    elif isinstance(target, ast.Subscript):
        recv = ip.eval(target.value, env)
        index = ip.eval(target.slice, env)
        ip.set_item(recv, index, value, stmt, target, env)
        _graph_replaced(target, value, env)
        _small_entries_replaced(target, value, env)
        if _replaces_every_entry(ip, target, stmt):
            # `for k, v in d.items(): d[k] = v.item()`: by the loop's end every entry was replaced
            for d in recv.of(DictObj):
                d.keys = dict.fromkeys(d.keys, value)
                d.rest = value if d.rest is not None else None
    elif isinstance(target, (ast.Tuple, ast.List)):
        elts = target.elts
        star = next((i for i, e in enumerate(elts) if isinstance(e, ast.Starred)), None)
        items = value.items
        if items is not None and star is None and len(items) == len(elts):
            for t, v in zip(elts, items):
                assign(ip, t, v, env, stmt)
            return
        if items is None and star is None and value.objs and (cols := columns(value, len(elts))) is not None:
            # `states, value, log_probs = rollout[i]` of rows known element by element: each name
            # takes its own column, not every element of every row
            for t, v in zip(elts, cols):
                assign(ip, t, v, env, stmt)
            return
        elem = ip.iter_value(value)
        for i, t in enumerate(elts):
            if isinstance(t, ast.Starred):
                lst = ListObj(elem, Site(ip.st.sf, t))
                assign(ip, t.value, V(Kind.LIST, frozenset((lst,))), env, stmt)
            elif items is not None and star is not None and len(items) >= len(elts) - 1:
                idx = i if i < star else len(items) - (len(elts) - i)
                assign(ip, t, items[idx] if 0 <= idx < len(items) else elem, env, stmt)
            else:
                assign(ip, t, elem, env, stmt)
    elif isinstance(target, ast.Starred):
        assign(ip, target.value, value, env, stmt)


def _replaces_every_entry(ip: Interp, target: ast.Subscript, stmt) -> bool:
    """`d[k] = ...` written directly in the body of `for k, v in d.items():` (or `for k in d:`,
    `d.keys()`): the loop replaces the value of every key of `d`."""
    loops = ip.st.stack[-1].loops
    loop = loops[-1]["node"] if loops else None
    if not isinstance(loop, ast.For) or not isinstance(target.slice, ast.Name) or stmt not in loop.body:
        return False
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "keys"):
        if it.args or it.keywords:
            return False
        it = it.func.value
    key = loop.target.elts[0] if isinstance(loop.target, ast.Tuple) and loop.target.elts else loop.target
    return isinstance(key, ast.Name) and key.id == target.slice.id and ast.dump(it) == ast.dump(target.value)


def _graph_replaced(target: ast.Subscript, value: V, env: dict) -> None:
    """`out["loss"] = out["loss"].detach()`: the element backward() ran on (Mark.HOLDS_GRAPH, set on
    a holder the engine does not see into) is replaced by a value without a graph."""
    holder = target.value
    if not isinstance(holder, ast.Name) or not isinstance(old := env.get(holder.id), V):
        return
    if old.marks & Mark.HOLDS_GRAPH and not (value.saves or value.carries or value.marks & Mark.GRAPH):
        env[holder.id] = old.replace(marks=old.marks & ~Mark.HOLDS_GRAPH)


def bind_name(ip: Interp, name: str, value: V, env: dict, stmt, rebind_check=True):
    if rebind_check and value.grads:
        old = env.get(name)
        if old is not None:
            check_rebind(ip, name, old, value, stmt)
    if "loss" in name.lower() and value.k & Kind.TENSOR:
        value = recording.note_loss(ip, value, f"`{name}`")
    frame = ip.st.stack[-1]
    if frame.func is not None and frame.func.scope.sf.declares_globals and name in _declared_global(frame.func.node):
        # `global Attention; Attention = LoRAAttention` in a function: the module's name changes.
        # Set under no branch of the function itself, the name holds the new value from here on
        # (`global loss_d` assigned in each iteration of a training loop run from a launcher under
        # an `if`: a join would keep every earlier iteration's loss, its graph long freed)
        # Under an undecided `if` at module level, the arm's bindings are the module's names
        # (`_exec_body`): the function's write goes there, where its reads find it.
        g = ip.st.live_globals.get(id(frame.scope.globals))
        if g is None:
            g = frame.scope.globals
        g[name] = join(g.get(name), value) if ip.st.cond > frame.cond and name in g else value
        env.pop(name, None)
        name_objects(ip, value, name)
        return
    loops = frame.loops
    if value.saves and loops and name in carried(loops[-1]["node"])[0]:
        recording.note_carry(ip, value, stmt)  # a name the next iteration reads
    env[name] = value
    ip.st.stack[-1].splits.pop(name, None)  # a new binding: what a flag split it into is gone
    name_objects(ip, value, name)


def _declared_global(fn_node) -> frozenset:
    """The names a function's own `global` statements declare (not those of functions inside it)."""
    if not isinstance(fn_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()  # a lambda's or a comprehension's frame declares none
    found = getattr(fn_node, "_gradaudit_globals", None)
    if found is None:
        names: set = set()
        stack: list[ast.AST] = list(fn_node.body)
        while stack:
            n = stack.pop()
            if isinstance(n, ast.Global):
                names.update(n.names)
            elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(ast.iter_child_nodes(n))
        found = frozenset(names)
        setattr(fn_node, "_gradaudit_globals", found)  # noqa: B010 (a cache on the node, as for constants)
    return found


def name_objects(ip: Interp, value: V, name: str):
    for o in value.objs:
        if isinstance(o, (ModuleObj, OptimObj, SchedObj, ScalerObj)):
            if o.label.startswith("<"):
                o.label = name
        elif isinstance(o, Unit) and o.owner is None and o.label.startswith("<"):
            o.label = name


def check_rebind(ip: Interp, name, old: V, new: V, stmt):
    """`w = w - lr * w.grad`: the leaf `w` is replaced by a non-leaf (GA111)."""
    if _view_site(old.site):
        return  # `d = delta[i]` then `d = d + a * g`: the name held a view of the leaf, not the leaf
    leaves = [
        u
        for u in old.objs
        if isinstance(u, Unit) and u.kind in (Unit.PARAM, Unit.LEAF, Unit.INPUT) and u.frozen != FROZEN
    ]
    hit = [u for u in leaves if u in new.grads and (u in new.org or ip.st.nograd is not None)]
    if hit:
        rec = InplaceRec(
            ip.seq(),
            InplaceRec.REBIND,
            Site(ip.st.sf, stmt),
            frozenset(hit),
            ip.st.nograd is not None,
            detail=name,
            ctx=ip.st.ctx,
            stmt=stmt,
        )
        rec.cuts = frozenset(c for c in new.cuts if (c.removed | c.removed_weak) & rec.units)
        ip.st.trace.inplace.append(rec)
        ip.st.trace.manual_updates.extend((u, Site(ip.st.sf, stmt), ip.seq()) for u in hit)


def _view_site(node) -> bool:
    """The expression made a view of a tensor (an index, `.view(...)`, `.detach()`), not a leaf."""
    if isinstance(node, ast.Subscript):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (node.func.attr in T.VIEW_OPS or node.func.attr == "detach")
    )


def _is_property_setter(item) -> bool:
    return any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in item.decorator_list)


def _refine(test, env: dict, arm: bool, ip: Interp | None = None) -> dict:
    """A copy of `env` for one arm of `if x is None` / `if x is not None`: there `x` is (or is not)
    None, so what it holds on the other arm does not flow through this one (`h = h.detach()` only
    when `h` is not None). Likewise for `if flag:` / `if not flag:` on a flag that split what a
    name holds (`best = f(x) if flag else x`): on each arm the name holds only what it got with the
    flag set that way."""
    out = dict(env)
    splits = ip.st.stack[-1].splits if ip is not None else None
    flag = flags.flag(ip, test) if ip is not None and splits else None
    if splits and flag is not None:
        name, polarity = flag
        value = arm == polarity
        for var, by_flag in splits.items():
            v = out.get(var)
            split = by_flag.get(name)
            if v is None or split is None:
                continue
            gone = split.only_false if value else split.only_true
            if v.objs & gone:
                out[var] = v.replace(objs=v.objs - gone)
        return out
    plain = narrowed(test, out, arm)
    if plain is not None:
        return plain
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        _refine_nonzero(test, out, arm)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))):
        return out
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant) and left.value is None:
        left, right = right, left
    if not (isinstance(left, ast.Name) and isinstance(right, ast.Constant) and right.value is None):
        return out
    v = env.get(left.id)
    if v is None:
        return out
    is_none = arm if isinstance(test.ops[0], ast.Is) else not arm
    if is_none:
        out[left.id] = NONE
    elif v.k & Kind.NONE and v.k != Kind.NONE:
        out[left.id] = v.replace(k=v.k & ~Kind.NONE, const=NOCONST if v.const is None else v.const)
    return out


def _refine_nonzero(test: ast.Compare, env: dict, arm: bool) -> None:
    """`if count == 0: ... else: loss / count` (or `if count > 0:`): on the arm where a value that
    is >= 0 and can be 0 (a count, a norm) is not 0, it is > 0 and safe to divide by."""
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
        op = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}.get(type(op), type(op))()
    x = nodes.summed(left, whole=True)
    summed = x.id if isinstance(x, ast.Name) else None
    if not (isinstance(left, ast.Name) or summed is not None) or not isinstance(right, ast.Constant):
        return
    zero = right.value == 0 and not isinstance(right.value, bool)
    nonzero = (
        (
            zero
            and (
                (isinstance(op, ast.Eq) and not arm)
                or (isinstance(op, (ast.NotEq, ast.Gt)) and arm)
                or (isinstance(op, ast.LtE) and not arm)
            )
        )
        or (isinstance(op, ast.GtE) and arm and _positive_number(right.value))
        or (isinstance(op, ast.Lt) and not arm and _positive_number(right.value))
    )
    if not nonzero:
        return
    if summed is not None:
        # `if torch.sum(gt_score) < 1: return ...`: from here on the tensor summed is not all zeros
        v = env.get(summed)
        if isinstance(v, V) and v.k & Kind.TENSOR:
            env[summed] = v.replace(facts=v.facts | Fact.NONZERO)
        return
    if isinstance(left, ast.Name):
        v = env.get(left.id)
        if isinstance(v, V) and v.marks & Mark.ZERO:
            env[left.id] = v.replace(facts=v.facts | Fact.POSITIVE)


def _small_entries_replaced(target: ast.Subscript, value: V, env: dict) -> None:
    """`denom[denom < eps] = 1` (NeRF's sample_pdf): every entry below a positive threshold (or at
    most 0) is replaced by a positive constant, so every entry is > 0 from here on: safe to divide
    by and to log (GA401, GA402)."""
    test, name = target.slice, target.value
    if not (
        isinstance(name, ast.Name)
        and isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Name)
        and test.left.id == name.id
        and _positive_number(value.const)
    ):
        return
    op, bound = test.ops[0], test.comparators[0]
    c = bound.value if isinstance(bound, ast.Constant) else None
    if isinstance(bound, ast.Name):
        held = env.get(bound.id)
        c = held.const if isinstance(held, V) else None
    below = (isinstance(op, ast.Lt) and _positive_number(c)) or (
        isinstance(op, ast.LtE) and isinstance(c, (int, float)) and not isinstance(c, bool) and c >= 0
    )
    v = env.get(name.id)
    if below and isinstance(v, V) and v.k & Kind.TENSOR:
        env[name.id] = v.replace(facts=v.facts | Fact.POSITIVE)


def _positive_number(c) -> bool:
    return isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0


def _s_with(ip: Interp, stmt, env):
    return ip.sem.with_statement(ip, stmt, env)


STATEMENTS = {
    ast.Expr: _s_expr,
    ast.Assign: _s_assign,
    ast.AnnAssign: _s_annassign,
    ast.AugAssign: _s_augassign,
    ast.If: _s_if,
    ast.For: _s_for,
    ast.AsyncFor: _s_for,
    ast.While: _s_while,
    ast.Break: _s_break,
    ast.Continue: _s_continue,
    ast.Return: _s_return,
    ast.Raise: _s_raise,
    ast.With: _s_with,
    ast.AsyncWith: _s_with,
    ast.Try: _s_try,
    ast.FunctionDef: _s_funcdef,
    ast.AsyncFunctionDef: _s_funcdef,
    ast.ClassDef: _s_classdef,
    ast.Import: _s_import,
    ast.ImportFrom: _s_importfrom,
    ast.Delete: _s_delete,
    ast.Pass: _s_pass,
    ast.Global: _s_pass,  # read where a name is bound (bind_name)
    ast.Nonlocal: _s_pass,
    ast.Match: _s_match,
}
if hasattr(ast, "TryStar"):
    STATEMENTS[ast.TryStar] = _s_try

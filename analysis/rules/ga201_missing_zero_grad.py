"""GA201 missing-zero-grad."""

import ast
from collections.abc import Callable, Iterator

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, Edit, Finding, Fix, Related
from ..model.model import Event, EventKind, Optimizer, Param, ProgramModel, Step
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names
from .lifecycle import (
    call_of,
    clears,
    first_by_span,
    in_iteration,
    insert_after,
    insert_before,
    iteration_related,
    loop_of,
    name_of,
    optimizers,
    own_event,
    receiver,
    statement_at,
    steps_of,
)


def _fix(ctx: RuleContext, step_event: Event, opt: Optimizer) -> Fix | None:
    """`opt.zero_grad()` as the first statement of the loop body holding the step()."""
    loop = loop_of(ctx, step_event.span)
    call = ctx.text(step_event.span)
    who = receiver(call, "step") if call else None
    if loop is None or who is None or "(" in who:
        return None
    edit = insert_before(ctx, step_event.span.path, loop.body[0], f"{who}.zero_grad()")
    if edit is None:
        return None
    return Fix(f"Clear the gradients at the start of each iteration: `{who}.zero_grad()`", SAFE, (edit,))


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    opts = optimizers(model)
    out = []
    enclosing: dict[tuple[int, ...], tuple[Event, ...]] = {}  # an iteration's events, by its loops
    for step in model.steps:
        if step.kind != EventKind.BACKWARD or not step.loops:
            continue
        bw = own_event(step)
        if bw is None:
            continue
        for key in step.stepped:
            opt = opts.get(key)
            if opt is None or opt.escaped or (opt.fresh_params and len(opt.loops) >= len(step.loops)):
                # fresh_params: its leaves are made anew each iteration, with no gradient yet (not when
                # they are made per run of a search and stepped in the batch loops under it)
                continue
            events, stepping = _stepping(
                model, step, bw, key, enclosing, lambda e, b: not _other_setting(e, b, model.counters)
            )
            if not stepping or any(e.detail == "closure" for e in stepping):
                continue  # a closure that clears (under a condition or not, no clear at all accumulates)
            held = opt.params | stepping[0].params
            clearing = [e for e in events if clears(e, held, opt) and not _other_setting(e, bw, model.counters)]
            if clearing:
                partial = _left_uncleared(model, step, opt, clearing) or _cleared_only_sometimes(
                    model, step, bw, opt, clearing, stepping
                )
                if partial is not None:
                    out.append(partial)
                continue
            if held and held <= model.grad_set:
                continue  # `p.grad = g` for each of them in the loop: each step applies that iteration's g
            # the backward sends them gradient only through code the engine could not see (a target
            # network's wrapper it was handed): that it accumulates there at all is not shown
            unseen = bool(held) and not (held & (step.reached | step.co_reached))
            # (an optimizer handed in holds parameters the engine cannot name: any it may reach)
            if unseen and not step.top and not (held & step.reached_weak) and not (opt.duck and step.reached_weak):
                # the backward sends none of them gradient (it runs through a copy, `target_model =
                # copy.deepcopy(net)`, whose gradients are then handed over by assignment): nothing
                # accumulates in them from one iteration to the next
                continue
            first = stepping[0]
            when = "runs in the loop" if first.guarded or bw.guarded else "runs every iteration"
            msg = (
                f"{call_of(opt, 'step')} {when} but nothing in the loop clears the gradients of "
                f"{describe(held) if held else 'its parameters'}: each backward() adds to the previous ones, so every "
                f"step applies the sum "
                f"of all gradients so far"
                + (
                    f" (if `{step.loss}.backward()` reaches them: it does only through code the engine "
                    "could not follow)"
                    if unseen
                    else ""
                )
            )
            out.append(
                RULE.finding(
                    first.span,
                    msg,
                    confidence=SUSPICIOUS if unseen else CONFIRMED,
                    params=names(held),
                    related=_accumulating(step, opt) + iteration_related(events, (first.span, step.span)),
                    fix=_fix(ctx, first, opt),
                )
            )
    out += _by_hand(ctx)
    out += _stale_before_the_loop(ctx, opts, enclosing)
    out += _stale_from_the_last_step(ctx, opts, enclosing)
    return first_by_span(out)


def _accumulating(step: Step, opt: Optimizer) -> tuple[Related, ...]:
    """The related locations of a finding on gradients that add up: the backward and the optimizer."""
    return (
        Related(step.span, f"`{step.loss}.backward()` accumulates into .grad"),
        Related(opt.span, f"{name_of(opt)} ({opt.type}) is built here"),
    )


def _left_uncleared(model: ProgramModel, step: Step, opt: Optimizer, clearing: list[Event]) -> Finding | None:
    """The loop clears some of the optimizer's parameters, not all: `student.zero_grad()` while the
    optimizer also holds a projection outside the student (`add_param_group`), whose gradients then
    add up from step to step. Only when every group and every clear is known exactly."""
    if not opt.complete or opt.duck or opt.assumed or not all(g.exact for g in opt.groups):
        return None
    covered: set[Param] = set()
    opts = optimizers(model)
    for e in clearing:
        if e.target_key in opts or e.detail in ("unseen", "grad=None"):
            # an optimizer's own zero_grad() (this one's, or another bound to the same name: DCRNN
            # rebuilds its optimizer in the first iteration), or a clear whose reach is not known
            return None
        covered |= e.params
        for g in opt.groups:
            if e.target and e.target in g.sources:
                covered |= g.params
    left = (opt.params - covered) & step.reached
    if not left or left <= model.grad_set:
        return None
    stepping = [e for e in step.events if e.kind == EventKind.STEP and e.target_key == opt.key]
    if not stepping:
        return None
    first, clear = stepping[0], clearing[0]
    return RULE.finding(
        first.span,
        f"{call_of(opt, 'step')} runs every iteration but the loop clears only some of its parameters: "
        f"nothing clears the gradients of {describe(left)}, so each backward() adds to theirs and every step "
        f"applies the sum of all their gradients so far; clear the optimizer itself",
        params=names(left),
        related=(Related(clear.span, "clears only the parameters of what it is called on"), *_accumulating(step, opt)),
    )


def _cleared_only_sometimes(
    model: ProgramModel, step: Step, bw: Event, opt: Optimizer, clearing: list[Event], stepping: list[Event]
) -> Finding | None:
    """Every clear runs under a counter's condition that the backward() and the step() do not run
    under (`if steps > disc_start: opt_g.zero_grad()` in a GAN's warm-up, the step every iteration):
    in the iterations where it does not hold, each step applies the sum of every gradient since the
    last clear. Not for a clear skipped only at the first iteration (`if step > 0:`), when nothing
    has accumulated yet."""
    level = len(step.loops)
    counters, kinds = model.counters, dict(model.counter_kinds)

    def counted(e: Event) -> list[tuple[int, int]]:
        return [(k, a) for k, a in e.guards_in(level) if k in counters]

    if bw.guards_in(level) or any(e.guards_in(level) for e in stepping):
        # an accumulation (the step under the counter, or under a flag computed from it, as MAE's
        # `update_grad`), or a phase that steps only with its clear
        return None
    how = set()
    for e in clearing:
        guards = counted(e)
        if not guards:
            return None  # cleared every iteration
        for k, arm in guards:
            kind = kinds.get(k, "")
            if not kind or (kind == "first" and arm == 0):
                return None
            how.add(kind)
    clear = clearing[0]
    return RULE.finding(
        stepping[0].span,
        f"{call_of(opt, 'step')} runs every iteration but the gradients of "
        f"{describe(opt.params) if opt.params else 'its parameters'} are cleared only "
        f"when a condition on the iteration holds (line {clear.span.line}): in the iterations where it does not, each "
        f"backward() adds to the gradients left from the previous ones and the step applies their sum; clear them "
        f"in every iteration that steps",
        confidence=SUSPICIOUS if "unknown" in how or "first" in how else CONFIRMED,
        params=names(opt.params),
        related=(Related(clear.span, "clears only when the condition holds"), *_accumulating(step, opt)),
    )


def _by_hand(ctx: RuleContext) -> list[Finding]:
    """Leaves updated by hand from their `.grad` (`w.data.sub_(lr * w.grad)`, `w -= lr * w.grad` under
    no_grad) in each iteration of the loop whose backward() fills those gradients, and never cleared
    there (`w.grad.zero_()`, `w.grad = None`): the hand-written step applies the sum of every
    gradient so far, as an optimizer's step() does without zero_grad()."""
    model = ctx.model
    out = []
    for step in model.steps:
        bw = own_event(step)
        if bw is None or step.kind != EventKind.BACKWARD or not step.loops:
            continue
        updates = [
            e
            for e in step.events
            if e.kind == EventKind.BY_HAND and e.seq > bw.seq and in_iteration(e, step.loops) and e.params
        ]
        held = frozenset(p for e in updates for p in e.params) & (step.reached | step.co_reached)
        if not held or held <= model.grad_set:
            continue
        if any(clears(e, held) for e in step.events if in_iteration(e, step.loops)):
            continue
        first = min((e for e in updates if e.params & held), key=lambda e: e.seq)
        msg = (
            f"{describe(held)} {'is' if len(held) == 1 else 'are'} updated by hand from .grad every iteration but "
            f"nothing in the loop clears {'its gradient' if len(held) == 1 else 'their gradients'}: each "
            "backward() adds to the previous ones, so every update applies the sum of all gradients so far"
        )
        out.append(
            RULE.finding(
                first.span,
                msg,
                params=names(held),
                related=(Related(step.span, f"`{step.loss}.backward()` accumulates into .grad"),)
                + iteration_related(step.events, (first.span, step.span)),
                fix=_clear_after(ctx, updates),
            )
        )
    return out


def _clear_after(ctx: RuleContext, updates: list[Event]) -> Fix | None:
    """`w.grad.zero_()` after the last hand update of each leaf, where it reads `w.grad`."""
    edits: list[tuple[str, Edit]] = []
    for e in sorted(updates, key=lambda e: -e.span.line):
        stmt, _ = statement_at(ctx, e.span)
        if stmt is None:
            return None
        leaf = next(
            (
                ast.unparse(n.value)
                for n in ast.walk(stmt)
                if isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, ast.Load)
            ),
            None,
        )
        if leaf is None or any(leaf == t for t, _ in edits):
            continue
        edit = insert_after(ctx, e.span.path, stmt, f"{leaf}.grad.zero_()")
        if edit is None:
            return None
        edits.append((leaf, edit))
    if not edits:
        return None
    return Fix(
        "Clear each gradient after its update: " + ", ".join(f"`{t}.grad.zero_()`" for t, _ in reversed(edits)),
        SAFE,
        tuple(e for _, e in edits),
    )


def _stepping(
    model: ProgramModel, step: Step, bw: Event, key: int, enclosing: dict, keep: Callable[[Event, Event], bool]
) -> tuple[tuple[Event, ...], list[Event]]:
    """The events of the iteration that steps optimizer `key` for `step`'s backward, and its steps
    there that `keep(event, bw)` accepts: the backward's own iteration, or, for a backward() in an
    inner loop (micro-batches, several D steps), the enclosing iteration whose step() follows it (the
    one to clear in). `enclosing` keeps an iteration's events by its loops, for the whole check."""
    events: tuple[Event, ...] = step.events
    stepping = [e for e in steps_of(events, key) if keep(e, bw)]
    loops = step.loops[:-1]
    while not stepping and loops:
        if loops not in enclosing:
            enclosing[loops] = tuple(e for e in model.events if in_iteration(e, loops))
        events = enclosing[loops]
        stepping = [e for e in steps_of(events, key) if len(e.loops) == len(loops) and e.seq > bw.seq and keep(e, bw)]
        loops = loops[:-1]
    return events, stepping


def _looped_backwards(model: ProgramModel, opts: dict) -> Iterator[tuple[Step, Event, int, Optimizer]]:
    """(step, its backward() event, key, optimizer) for each backward() in a loop and each optimizer
    it steps that the engine knows, that is not handed to unseen code and whose parameters are not
    made anew with it."""
    for step in model.steps:
        bw = own_event(step)
        if bw is None or step.kind != EventKind.BACKWARD or not step.loops:
            continue
        for key in step.stepped:
            opt = opts.get(key)
            if opt is not None and not opt.escaped and not opt.fresh_params:
                yield step, bw, key, opt


def _stale_before_the_loop(ctx: RuleContext, opts: dict, enclosing: dict) -> list[Finding]:
    """A loop that clears its optimizer's gradients only after the step (`step(); zero_grad()`),
    after a backward() before the loop reached the same parameters with no clear in between (a
    debug pass that writes reference gradients): the loop's first step applies that backward's
    gradients added to its own."""
    model = ctx.model
    out: list[Finding] = []
    seen: set[tuple[int, int]] = set()
    backwards = [(s, own_event(s)) for s in model.steps if s.kind == EventKind.BACKWARD]
    for step, bw, key, opt in _looped_backwards(model, opts):
        if (step.loops[0], key) in seen:
            continue
        events, stepping = _stepping(model, step, bw, key, enclosing, lambda e, b: e.seq > b.seq)
        if not stepping or any(e.detail == "closure" for e in stepping):
            continue
        seen.add((step.loops[0], key))
        first = stepping[0]
        held = opt.params | first.params
        cleared = [e for e in events if clears(e, held, opt)]
        # cleared only after the step (a loop with no clear at all is the check above)
        if not cleared or any(e.seq < first.seq for e in cleared):
            continue
        start = min(e.seq for e in model.events if in_iteration(e, step.loops[:1]))
        for other, obw in backwards:
            # an earlier iteration of the same loop (one the engine decided did not step) is no
            # backward before the loop
            if obw is None or obw.seq >= start or other.loop_stmts[:1] == step.loop_stmts[:1] or obw.exclusive(bw):
                continue
            reached = held & other.reached
            if not reached or any(
                clears(e, held, opt) or (e.kind == EventKind.STEP and e.target_key == key)
                for e in model.events
                if obw.seq < e.seq < start
            ):
                continue
            out.append(
                RULE.finding(
                    first.span,
                    f"the first {call_of(opt, 'step')} of the loop applies the gradients that "
                    f"`{other.loss}.backward()` left before the loop in {describe(reached)}, added to its own: "
                    f"the loop clears them only after each step",
                    # under a setting (`if args.write_tensors:`) the earlier backward may not run
                    confidence=SUSPICIOUS if obw.guarded or obw.conds else CONFIRMED,
                    params=names(reached),
                    related=(
                        Related(other.span, f"`{other.loss}.backward()` before the loop"),
                        Related(cleared[0].span, "the loop clears the gradients only here, after the step"),
                    ),
                )
            )
            break
    return out


def _stale_from_the_last_step(ctx: RuleContext, opts: dict, enclosing: dict) -> list[Finding]:
    """An optimizer stepped twice in an iteration (a VAE step, then an adversarial one) whose
    gradients are cleared only between its first and its last step: what the backward() before the
    last step left is still there when the next iteration's first step runs, which applies it a
    second time, added to its own gradients."""
    model = ctx.model
    out: list[Finding] = []
    seen: set[tuple[tuple[int, ...], int]] = set()
    for step, bw, key, opt in _looped_backwards(model, opts):
        events, stepping = _stepping(model, step, bw, key, enclosing, lambda e, b: True)
        if len(stepping) < 2 or (stepping[0].loops, key) in seen:
            continue
        seen.add((stepping[0].loops, key))
        held = opt.params | frozenset().union(*(e.params for e in stepping))
        cleared = [e for e in events if clears(e, held, opt)]
        first, last = stepping[0], stepping[-1]
        # every step and clear runs in every iteration, the clears all between the first step
        # and the last (none at all is the check above)
        if (
            not cleared
            or any(e.guarded or e.detail == "closure" for e in stepping + cleared)
            or any(not first.seq < e.seq < last.seq for e in cleared)
        ):
            continue
        after = max(e.seq for e in cleared)
        left = [
            s
            for s in model.steps
            if s.kind == EventKind.BACKWARD
            and (b := own_event(s)) is not None
            and b in events
            and after < b.seq < last.seq
            and not b.guarded
            and s.reached & held
        ]
        if not left:
            continue
        reached = held & left[0].reached
        out.append(
            RULE.finding(
                first.span,
                f"{call_of(opt, 'step')} applies, added to its own, the gradients that "
                f"`{left[0].loss}.backward()` left in {describe(reached)} in the previous iteration, which "
                f"the last {call_of(opt, 'step')} there already applied: nothing clears them between the "
                "iteration's last step and its first",
                confidence=CONFIRMED,
                params=names(reached),
                related=(
                    Related(left[0].span, f"`{left[0].loss}.backward()` leaves these gradients"),
                    Related(last.span, "the last step of the iteration applies them once"),
                    Related(cleared[0].span, "the only clear, between the two steps"),
                ),
            )
        )
    return out


def _other_setting(e: Event, bw: Event, counters: frozenset[int]) -> bool:
    """`e` runs on the other arm of a condition that does not change between iterations (`if
    args.amp: optimizer.zero_grad(); scaler...` and an `else:` that only steps): where the backward
    runs, it never does. (The other arm of a counter's test runs in other iterations and clears.)"""
    mine = {k: a for k, a, _ in bw.conds}
    return any(k in mine and mine[k] != a and k not in counters for k, a, _ in e.conds)


RULE = Rule(
    code="GA201",
    name="missing-zero-grad",
    family=LIFECYCLE,
    summary="a training loop steps every iteration and never clears the gradients",
    what="""
Flags an optimizer's `step()` in a loop that runs `backward()` and `step()` every iteration while
nothing in the loop clears that optimizer's gradients (`optimizer.zero_grad()`,
`model.zero_grad()`, `p.grad = None`). Deliberate accumulation, where the step and the clearing
run under a counter condition, and closures that clear (LBFGS) are not flagged. A `backward()` in
an inner loop (micro-batches, several critic steps) is judged against the `step()` of the
iteration around it; a clear on the other arm of a setting (`if args.amp:`, the same in every
iteration) does not count for the arm that runs without it. Also flagged: a loop that clears only
after its step (`step(); zero_grad()`) when a `backward()` before the loop (a reference or debug
pass) reached the same parameters and nothing cleared them since: the first step applies both.
And an optimizer stepped twice in an iteration (a reconstruction step, then an adversarial one)
whose gradients are cleared only between its two steps: each iteration's first step applies again
what the backward() before the previous iteration's last step left.
A model and optimizer built anew in each iteration that steps need no clearing; built once per run
of a search and stepped in the epoch and batch loops under it, they do. An update written by hand
is a step too: leaves changed every iteration by what they read from their own `.grad`
(`w.data.sub_(lr * w.grad)`, `w -= lr * w.grad` under `torch.no_grad()`) and never cleared
(`w.grad.zero_()`, `w.grad = None`) are flagged at the first update; the fix clears each after it.
An optimizer of another library that the engine knows only by its name (`AnalogSGD`, taken for an
SGD) makes the finding suspicious: its own `step()` was not read.
""",
    why="""
`backward()` adds into `.grad`. Without clearing, the gradient applied at step k is the sum of
the gradients of steps 1..k: the effective learning rate grows every iteration and momentum
optimizers diverge.
""",
    example="""
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
    use_instead="""
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
    severity="medium",
    premises=("step", "clears"),
    lookalike=(
        "Nothing clears the gradients in the loop that steps every iteration; deliberate accumulation "
        "steps and clears under a counter condition."
    ),
    runtime=RuntimeCheck("cleared", "`cleared` fails: a step applies gradients left from before the previous step"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for it in range(4):
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = criterion(net(x), y)
    loss.backward()
    optimizer.step()  # <- GA201
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for it in range(4):
    optimizer.zero_grad()
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = criterion(net(x), y)
    loss.backward()
    optimizer.step()
""",
            runtime="stale-grads",
        ),
        Example(
            """import torch
import torch.nn as nn


def train(model, batches, opt, epochs=2):
    opt.zero_grad()
    for epoch in range(epochs):
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()  # <- GA201


torch.manual_seed(1)
model = nn.Linear(5, 1)
batches = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(3)]
train(model, batches, torch.optim.Adam(model.parameters(), lr=1e-2))
""",
            fixed="""import torch
import torch.nn as nn


def train(model, batches, opt, epochs=2):
    opt.zero_grad()
    for epoch in range(epochs):
        for x, y in batches:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()


torch.manual_seed(1)
model = nn.Linear(5, 1)
batches = [(torch.randn(4, 5), torch.randn(4, 1)) for _ in range(3)]
train(model, batches, torch.optim.Adam(model.parameters(), lr=1e-2))
""",
            runtime="stale-grads",
            note="a clear before the loops is not one per iteration",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher, student = nn.Linear(8, 16), nn.Linear(8, 4)
proj = nn.Linear(4, 16)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
optimizer.add_param_group({"params": proj.parameters()})
for step in range(3):
    x = torch.randn(32, 8)
    with torch.no_grad():
        target = teacher(x)
    loss = F.mse_loss(proj(student(x)), target)
    loss.backward()
    optimizer.step()  # <- GA201
    student.zero_grad()
""",
            runtime="stale-grads",
            note="the loop clears the student, not the projection the optimizer also holds (TextBrewer)",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
for steps in range(6):
    z, real = torch.randn(8, 4), torch.randn(8, 4)
    fake = gen(z)
    g_loss = (fake - real).abs().mean()
    if steps > 2:
        opt_d.zero_grad()
        d_loss = nn.functional.softplus(disc(fake.detach())).mean() + nn.functional.softplus(-disc(real)).mean()
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = g_loss - disc(fake).mean()
    g_loss.backward()
    opt_g.step()  # <- GA201
""",
            runtime="stale-grads",
            note="the generator is cleared only once the discriminator trains: its warm-up steps add up (UnivNet)",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
opt_g = torch.optim.SGD(gen.parameters(), lr=0.1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
for steps in range(6):
    z, real = torch.randn(8, 4), torch.randn(8, 4)
    fake = gen(z)
    g_loss = (fake - real).abs().mean()
    if steps > 0:
        opt_d.zero_grad()
        d_loss = nn.functional.softplus(disc(fake.detach())).mean() + nn.functional.softplus(-disc(real)).mean()
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = g_loss - disc(fake).mean()
    g_loss.backward()
    opt_g.step()
""",
            runtime="trains",
            note="only the first iteration skips the clear, when no gradient has accumulated yet",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher, student = nn.Linear(8, 16), nn.Linear(8, 4)
proj = nn.Linear(4, 16)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
optimizer.add_param_group({"params": proj.parameters()})
for step in range(3):
    x = torch.randn(32, 8)
    with torch.no_grad():
        target = teacher(x)
    loss = F.mse_loss(proj(student(x)), target)
    loss.backward()
    optimizer.step()
    student.zero_grad()
    proj.zero_grad()
""",
            runtime="trains",
            note="each module the optimizer holds is cleared",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
clf = nn.Sequential(nn.Linear(12, 20), nn.GELU(), nn.Linear(20, 3))
opt = torch.optim.AdamW(clf.parameters(), lr=3e-3)
accum_steps = 4
opt.zero_grad()
for i in range(8):
    x, y = torch.randn(8, 12), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(clf(x), y)
    (loss / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        opt.step()
        opt.zero_grad()
""",
            runtime="trains",
            note="deliberate accumulation: step and clear under a counter",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
mlp = nn.Sequential(nn.Linear(5, 16), nn.SiLU(), nn.Linear(16, 1))
opt = torch.optim.RMSprop(mlp.parameters(), lr=1e-2)
X, Y = torch.randn(40, 5), torch.randn(40, 1)
for it in range(3):
    for p in mlp.parameters():
        p.grad = None
    loss = (mlp(X) - Y).pow(2).mean()
    loss.backward()
    opt.step()
for it in range(2):
    mlp.zero_grad(set_to_none=True)
    loss = (mlp(X) - Y).pow(2).mean()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="gradients cleared by `p.grad = None` and by the model's zero_grad()",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(4)
model = nn.Linear(4, 1)
X = torch.randn(50, 4)
y = (X.sum(1, keepdim=True) > 0).float()
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)


def closure():
    opt.zero_grad()
    loss = nn.functional.binary_cross_entropy_with_logits(model(X), y)
    loss.backward()
    return loss


for outer in range(3):
    opt.step(closure)
""",
            runtime="trains",
            note="the closure clears the gradients each evaluation",
        ),
    ),
)

"""GA202 zero-grad-before-step."""

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, Finding, Fix, Related
from ..model.model import Event, EventKind, Optimizer, Param, Step
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names
from .lifecycle import (
    BACKWARDS,
    call_of,
    clears,
    first_by_span,
    if_blocks,
    in_iteration,
    iteration_related,
    modulo_divisor,
    move_statement,
    optimizers,
    own_event,
    statement_at,
    steps_of,
    under_counter,
)


def _fix(ctx: RuleContext, clear: Event, step_event: Event) -> Fix | None:
    """Move the zero_grad() to just after the step()."""
    z, zbody = statement_at(ctx, clear.span)
    s, sbody = statement_at(ctx, step_event.span)
    if z is None or s is None or zbody is not sbody or clear.span.path != step_event.span.path:
        return None
    edits = move_statement(ctx, clear.span.path, z, s)
    if edits is None:
        return None
    return Fix("Move the zero_grad() after step()", SAFE, edits)


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    opts = optimizers(model)
    out = []
    for step in model.steps:
        if step.kind != EventKind.BACKWARD:
            continue
        bw = own_event(step)
        if bw is None:
            continue
        written = step.reached | step.reached_weak
        for key in step.stepped:
            opt = opts.get(key)
            if opt is None:
                continue
            for st in steps_of(step.events, key):
                if st.seq < bw.seq or st.guarded or st.detail == "closure" or st.exclusive(bw):
                    continue
                between = [e for e in step.events if bw.seq < e.seq < st.seq]
                if any(e.kind in BACKWARDS for e in between):
                    continue  # a later backward() fills them again before the step
                hit = opt.params & written
                for e in between:
                    # an optimizer of parameters the engine cannot name clears, with its own
                    # zero_grad(), whatever of them the backward wrote
                    own = opt.duck and e.target_key == opt.key
                    clears = e.kind == EventKind.ZERO_GRAD and (e.params & hit or own)
                    if clears and not e.guarded and not e.exclusive(st):
                        lost = e.params & hit
                        what = f"gradients of {describe(lost)}" if lost else f"the gradients of `{opt.name}`'s params"
                        msg = (
                            f"{what} are cleared after `{step.loss}.backward()` and before "
                            f"{call_of(opt, 'step')}: the step applies zero (or no) gradients, so they never change"
                        )
                        out.append(
                            RULE.finding(
                                e.span,
                                msg,
                                params=names(lost),
                                related=(
                                    Related(step.span, f"`{step.loss}.backward()` writes the gradients"),
                                    Related(st.span, f"{call_of(opt, 'step')} finds them cleared"),
                                )
                                + iteration_related(step.events, (e.span, step.span, st.span)),
                                fix=_fix(ctx, e, st),
                            )
                        )
                        break
                break
            dropped = _accumulation_dropped(ctx, step, bw, opt, written)
            if dropped is not None:
                out.append(dropped)
    return first_by_span(out)


def _accumulation_dropped(
    ctx: RuleContext, step: Step, bw: Event, opt: Optimizer, written: frozenset[Param]
) -> Finding | None:
    """An accumulation (the step under `if (i + 1) % n == 0:`, the backward every micro-batch) whose
    gradients are cleared every micro-batch: each clear drops what the micro-batches before it
    wrote, and the step applies the last one's gradient only."""
    if bw.guarded or not step.loops:
        return None
    here = steps_of(step.events, opt.key)
    if here:
        if not under_counter(ctx.model, step, here):
            return None  # every iteration, or under a configuration flag, not a counter
        events, level = list(step.events), len(step.loops)
    else:
        # the backward in an inner loop (a sample's chunks), the step under the counter of the
        # enclosing iteration (every n samples): that iteration's clear drops as much
        outer, level = step.loops[:-1], len(step.loops) - 1
        if not outer:
            return None
        events = [e for e in ctx.model.events if len(e.loops) == level and in_iteration(e, outer)]
        here = [e for e in events if e.kind == EventKind.STEP and e.target_key == opt.key and e.seq > bw.seq]
        counters = ctx.model.counters
        if not here or not all(any(k in counters for k, _ in e.guards_in(level)) for e in here):
            return None
    divisor = modulo_divisor(ctx, here[0])
    if divisor is None:
        return None  # a counter that does not repeat (a warm-up): no accumulation
    clear = next(
        (
            e
            for e in events
            if e.kind == EventKind.ZERO_GRAD
            and not e.guards_in(level)
            and clears(e, opt.params, opt)
            and e.params & written
        ),
        None,
    )
    if clear is None:
        return _cleared_with_the_step(ctx, step, bw, opt, written, events, level, here[0], divisor)
    lost = clear.params & written
    return RULE.finding(
        clear.span,
        f"gradients of {describe(lost)} are cleared for every micro-batch while {call_of(opt, 'step')} runs once "
        f"every `{divisor}`: each clear drops what the earlier micro-batches accumulated, so every step applies "
        f"the last micro-batch's gradient only; clear them with the step",
        params=names(lost),
        related=(
            Related(step.span, f"`{step.loss}.backward()` accumulates into .grad every micro-batch"),
            Related(here[0].span, f"{call_of(opt, 'step')}, every `{divisor}` micro-batches"),
        ),
        fix=_fix(ctx, clear, here[0]),
    )


def _cleared_with_the_step(
    ctx: RuleContext,
    step: Step,
    bw: Event,
    opt: Optimizer,
    written: frozenset[Param],
    events: list[Event],
    level: int,
    st: Event,
    divisor: str,
) -> Finding | None:
    """The clear runs under the step's own condition (the same counter test, or the same
    `accelerator.accumulate` sync) but before the micro-batch's backward(): on the micro-batch that
    steps it drops what the earlier ones accumulated (DiffSynth-Studio's zero_grad() at the top of
    `accelerator.accumulate`). A clear under another test (`if i % n == 0:` at a cycle's start) is
    the right place."""
    test = _condition(ctx, st, level)
    if test is None:
        return None
    counters = ctx.model.counters
    if {k for k, _ in bw.guards_in(level) if k in counters} & {k for k, _ in st.guards_in(level)}:
        # the backward runs under the step's condition too (REINFORCE's update every n episodes:
        # clear, a backward per stored step, then the step): nothing accumulates outside it
        return None
    clear = next(
        (
            e
            for e in events
            if e.kind == EventKind.ZERO_GRAD
            and e.seq < bw.seq
            and e.guards_in(level)
            and _condition(ctx, e, level) == test
            and ((clears(e, opt.params, opt) and e.params & written) or e.target_key == opt.key)
        ),
        None,
    )
    if clear is None:
        return None
    lost = clear.params & written
    # the optimizer's own zero_grad() clears what its step applies; when the engine cannot name its
    # parameters, that the backward wrote them is not proven
    what = f"gradients of {describe(lost)} are" if lost else f"`{opt.name}`'s gradients are"
    return RULE.finding(
        clear.span,
        f"{what} cleared under the same condition as {call_of(opt, 'step')} but before "
        f"this micro-batch's `{step.loss}.backward()`: on the micro-batch that steps (every `{divisor}`) the clear "
        f"drops what the earlier micro-batches accumulated, so every step applies the last micro-batch's gradient "
        f"only; clear them after the step",
        confidence=CONFIRMED if lost else SUSPICIOUS,
        params=names(lost),
        related=(
            Related(step.span, f"`{step.loss}.backward()` accumulates into .grad every micro-batch"),
            Related(st.span, f"{call_of(opt, 'step')}, every `{divisor}` micro-batches"),
        ),
        fix=_fix(ctx, clear, st),
    )


def _condition(ctx: RuleContext, e: Event, level: int) -> tuple | None:
    """What decides whether `e` runs in an iteration: the counter keys it runs under when they are
    not `if` statements of the source (accelerate's sync), else the text of the innermost `if` test
    around it (two `if (i + 1) % n == 0:` statements are one condition)."""
    keys = tuple(sorted(k for k, _ in e.guards_in(level) if k in ctx.model.counters))
    if not keys:
        return None
    best = None
    for first, last, at, test in if_blocks(ctx, e.span.path):
        if first <= e.span.line <= last and (best is None or at > best[0]):
            best = (at, test)
    return ("keys", keys) if best is None else ("test", best[1])


RULE = Rule(
    code="GA202",
    name="zero-grad-before-step",
    family=LIFECYCLE,
    summary="gradients cleared between backward() and step()",
    what="""
Flags a `zero_grad()` (on the optimizer or the model) or `p.grad = None` that runs after
`backward()` and before the `step()` of the optimizer holding those parameters, in the same
iteration, with no other `backward()` in between. Clearing another optimizer's gradients there,
or a second backward after the clear (an adversarial example's input gradient first), is not
flagged. In a gradient accumulation (the step under `if (i + 1) % n == 0:`, or under a flag the
function assigned that test, `update = (i + 1) % n == 0; if update:`; the backward every
micro-batch) it flags a clear that runs every micro-batch, outside the step's condition, and one
under the step's own condition (the same `if` test, or the sync of `accelerator.accumulate`) that
runs before the micro-batch's backward: on the micro-batch that steps it drops the others.
""",
    why="""
`zero_grad()` sets the gradients `backward()` just computed to `None` (or zero); `step()` then
has nothing to apply and the parameters never change, while the loss is still printed. In an
accumulation, each clear drops the micro-batches before it: every step applies the last
micro-batch's gradient only (divided by the count, if the loss is).
""",
    example="""
loss.backward()
optimizer.zero_grad()
optimizer.step()
""",
    use_instead="""
loss.backward()
optimizer.step()
optimizer.zero_grad()
""",
    severity="high",
    lookalike="Gradients are cleared between backward() and step() of the same iteration.",
    runtime=RuntimeCheck("updates", "`updates` fails: the gradients are cleared before step() applies them"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    loss = loss_fn(net(x), y)
    loss.backward()
    optimizer.zero_grad()  # <- GA202
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    loss = loss_fn(net(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
            runtime="no-update: net",
        ),
        Example(
            """import torch
import torch.nn as nn


def optimize(model, optimizer, loss):
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    model.zero_grad()  # <- GA202
    optimizer.step()


torch.manual_seed(1)
model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    x = torch.randn(6, 4)
    optimize(model, optimizer, nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)))
""",
            fixed="""import torch
import torch.nn as nn


def optimize(model, optimizer, loss):
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    model.zero_grad()


torch.manual_seed(1)
model = nn.Linear(4, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    x = torch.randn(6, 4)
    optimize(model, optimizer, nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)))
""",
            runtime="no-update: model",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
accum = 2
for it in range(6):
    x, y = torch.randn(3, 4), torch.randn(3, 1)
    loss = nn.functional.mse_loss(model(x), y) / accum
    update = (it + 1) % accum == 0
    if update:
        opt.zero_grad()  # <- GA202
    loss.backward()
    if update:
        opt.step()
""",
            runtime="trains",
            note="the accumulation's condition held in a flag: each step applies the last micro-batch's gradient only",
        ),
        Example(
            """import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accum = 4
single_subject = len(sys.argv) > 1


def run_iteration(itr, x, y):
    loss = F.mse_loss(model(x), y) / accum
    optimizer.zero_grad()  # <- GA202
    loss.backward()
    if (itr + 1) % accum == 0:
        optimizer.step()


for itr in range(8):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    if single_subject:
        run_iteration(itr, x[:1].expand(8, 4), y[:1].expand(8, 1))
    else:
        run_iteration(itr, x, y)
""",
            runtime="trains",
            note="both arms of a setting run the one iteration function: the clear is not conditioned by it (xvr)",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for it in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 2, (8,))
    x.requires_grad_(True)
    F.cross_entropy(model(x), y).backward()
    x_adv = (x + 0.1 * x.grad.sign()).detach()
    opt.zero_grad()
    adv_loss = F.cross_entropy(model(x_adv), y)
    adv_loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the clear is followed by the backward the step uses",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
actor = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())
critic = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for update in range(3):
    s, a, r = torch.randn(16, 6), torch.rand(16, 2) * 2 - 1, torch.randn(16, 1)
    critic_opt.zero_grad()
    critic_loss = (critic(torch.cat([s, a], 1)) - r).pow(2).mean()
    critic_loss.backward()
    actor_opt.zero_grad()
    critic_opt.step()
    actor_loss = -critic(torch.cat([s, actor(s)], 1)).mean()
    actor_loss.backward()
    actor_opt.step()
""",
            runtime="trains",
            note="the clear between concerns the other optimizer",
        ),
    ),
)

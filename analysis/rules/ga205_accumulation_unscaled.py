"""GA205 accumulation-unscaled."""

import ast

from ..model.findings import SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import EventKind, Step
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import (
    call_of,
    clears,
    first_by_span,
    in_iteration,
    iteration_related,
    modulo_divisor,
    optimizers,
    own_event,
    receiver,
    statement_at,
    steps_of,
    under_counter,
)


def _other_step_beside(ctx: RuleContext, step: Step, known: str) -> bool:
    """A `x.step()` of another receiver than `known` (not a scheduler) right in the block of the
    backward(), after it: an optimizer the engine could not see (`self.critic.optimizer`, built by a
    policy elsewhere) that consumes the gradients every iteration, so none is accumulated."""
    stmt, block = statement_at(ctx, step.span)
    if stmt is None or block is None:
        return False
    for later in block[block.index(stmt) + 1 :]:
        call = later.value if isinstance(later, ast.Expr) else None
        f = call.func if isinstance(call, ast.Call) else None
        if isinstance(f, ast.Attribute) and f.attr == "step":
            who = ctx.text_of_node(step.span.path, f.value) or ""
            if who and who != known and "sched" not in who.lower():
                return True
    return False


def _fix(ctx: RuleContext, step: Step, divisor: str | None) -> Fix | None:
    call = ctx.text(step.span)
    who = receiver(call, "backward") if call else None
    if who is None or divisor is None:
        return None
    return Fix(
        f"Average over the accumulated micro-batches: `({who} / {divisor}).backward()`",
        UNSAFE,
        (ctx.replace(step.span, f"({who} / {divisor}).backward()"),),
    )


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    opts = optimizers(model)
    out = []
    # scaled on some path (as marks join): also over the evaluations of one backward, one of which
    # may have reached the loss through a call it could not follow (a budget cut)
    scaled = {s.span for s in model.steps if s.scaled}
    for step in model.steps:
        if step.kind != EventKind.BACKWARD or step.span in scaled or not step.loops:
            continue
        bw = own_event(step)
        if bw is None or bw.guarded:
            continue
        for key in step.stepped:
            opt = opts.get(key)
            if opt is None:
                continue
            reach = step.reached | step.reached_weak
            if reach and not reach & opt.params:
                # none of the parameters it may reach is that optimizer's: it feeds others (an attack
                # on a deep copy of the model, before the model's own step)
                continue
            here = steps_of(step.events, key)
            divisor = None
            if here:
                # stepped and cleared under a counter while the backward runs every iteration
                if not under_counter(model, step, here):
                    continue  # every iteration, or under a configuration flag: no accumulation
                cleared = [e for e in step.events if clears(e, opt.params, opt)]
                if any(not e.guarded for e in cleared):
                    continue
                if _other_step_beside(ctx, step, opt.name):
                    continue
                how = "under a condition"
                anchor = here[0]
                divisor = modulo_divisor(ctx, anchor)
            else:
                # backward per micro-batch in an inner loop, one step after it
                outer = step.loops[:-1]
                later = [
                    e
                    for e in model.events
                    if e.kind == EventKind.STEP
                    and e.target_key == key
                    and e.seq > bw.seq
                    and in_iteration(e, outer)
                    and len(e.loops) == len(outer)
                ]
                if not later:
                    continue
                if any(clears(e, opt.params, opt) and not e.guarded for e in step.events):
                    continue  # every micro-batch clears what the one before left: nothing adds up (GA204's)
                anchor = later[0]
                if any(clears(e, opt.params, opt) for e in model.events if bw.seq < e.seq < anchor.seq):
                    continue  # cleared before the step: the inner loop's gradients are used otherwise (an attack)
                how = "once after the inner loop"
            msg = (
                f"`{step.loss}.backward()` runs for every micro-batch while {call_of(opt, 'step')} runs {how}: the "
                f"gradients of the micro-batches add up and the loss is not divided by their number, so each step "
                f"is as large as the micro-batch count times the mean (unless summing is meant)"
            )
            out.append(
                RULE.finding(
                    step.span,
                    msg,
                    confidence=SUSPICIOUS,
                    related=(Related(anchor.span, f"{call_of(opt, 'step')}"),)
                    + iteration_related(step.events, (step.span, anchor.span)),
                    fix=_fix(ctx, step, divisor),
                )
            )
    return first_by_span(out)


RULE = Rule(
    code="GA205",
    name="accumulation-unscaled",
    family=LIFECYCLE,
    summary="gradient accumulation without dividing the loss by the number of micro-batches",
    what="""
Flags a `backward()` that runs for every micro-batch while the optimizer steps (and clears) only
every N micro-batches, under a counter condition or after an inner loop, when the loss is not
divided by a count or scaled by a constant on its way to `backward()`. Suspicious: summing may be
meant.
""",
    why="""
Accumulated gradients add up: with N micro-batches per step the update is N times the gradient
of the mean loss, so the learning rate is effectively N times larger than tuned for, and
changing N changes the training.
""",
    example="""
loss = criterion(model(x), y)
loss.backward()
if (i + 1) % accum_steps == 0:
    optimizer.step()
    optimizer.zero_grad()
""",
    use_instead="""
loss = criterion(model(x), y)
(loss / accum_steps).backward()
if (i + 1) % accum_steps == 0:
    optimizer.step()
    optimizer.zero_grad()
""",
    severity="medium",
    lookalike=(
        "The loss is not divided by the number of micro-batches accumulated; summing may be intended, hence suspicious."
    ),
    runtime=RuntimeCheck(
        None,
        (
            "no runtime check: the gradients flow and stay finite either way; whether the summed "
            "micro-batch losses should be divided is a choice of scale"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accum_steps = 4
optimizer.zero_grad()
for i in range(8):
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    loss = criterion(model(x), y)
    loss.backward()  # <- GA205
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accum_steps = 4
optimizer.zero_grad()
for i in range(8):
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    loss = criterion(model(x), y)
    (loss / accum_steps).backward()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            runtime="trains",
            note="it trains, with steps accum_steps times too large",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


def train_on_batch(net, opt, xb, yb, n_chunks=4):
    opt.zero_grad()
    for cx, cy in zip(xb.chunk(n_chunks), yb.chunk(n_chunks)):
        loss = F.mse_loss(net(cx), cy)
        loss.backward()  # <- GA205
    opt.step()


torch.manual_seed(1)
net = nn.Linear(12, 1)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for it in range(3):
    xb = torch.randn(32, 12)
    train_on_batch(net, opt, xb, xb[:, :3].sum(1, keepdim=True))
""",
            runtime="trains",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
model = nn.Sequential(nn.Linear(10, 24), nn.ReLU(), nn.Linear(24, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    xb, yb = torch.randn(60, 10), torch.randint(0, 5, (60,))
    optimizer.zero_grad()
    for cx, cy in zip(xb.split(20), yb.split(20)):
        loss = F.cross_entropy(model(cx), cy, reduction="sum") / xb.size(0)
        loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="each micro-batch's loss is scaled to the whole batch",
        ),
    ),
)

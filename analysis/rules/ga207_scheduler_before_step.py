"""GA207 scheduler-before-step."""

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, Finding, Fix, Related
from ..model.model import Event, EventKind, Scheduler
from ..ops import torch_api as T
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import (
    first_by_span,
    if_blocks,
    in_iteration,
    iteration_related,
    loop_of,
    move_statement,
    statement_at,
    whole_lines,
)


def _fix(ctx: RuleContext, sched_event: Event, step_event: Event) -> Fix | None:
    """Move scheduler.step() after the optimizer's step (same block), or to the end of its loop body
    when the optimizer steps in a nested loop."""
    s, sbody = statement_at(ctx, sched_event.span)
    o, obody = statement_at(ctx, step_event.span)
    if s is None or o is None or sched_event.span.path != step_event.span.path:
        return None
    if sbody is obody:
        edits = move_statement(ctx, sched_event.span.path, s, o)
    else:
        loop = loop_of(ctx, sched_event.span)
        if (
            loop is None
            or sbody is not loop.body
            or not (loop.body[-1].lineno <= (loop.body[-1].end_lineno or loop.body[-1].lineno))
        ):
            return None
        last = loop.body[-1]
        if whole_lines(ctx, sched_event.span.path, last) is None or last is s:
            return None
        edits = move_statement(ctx, sched_event.span.path, s, last)
    return Fix("Step the scheduler after the optimizer", SAFE, edits) if edits else None


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    scheds = {s.key: s for s in model.schedulers}
    out = []
    for e in model.events:
        if e.kind != EventKind.SCHED_STEP or not e.loops:
            continue
        sched = scheds.get(e.target_key)
        if sched is None or not sched.optimizer or sched.type == "ReduceLROnPlateau":
            continue
        if e.detail == "epoch":
            continue  # `step(epoch=e)` sets the schedule from the epoch: nothing is skipped
        if e.detail == "metric" and sched.type not in T.SCHEDULERS:
            continue  # a library's schedule picked by a name the engine cannot read, stepped on a metric
        same = [x for x in model.events if in_iteration(x, e.loops)]
        steps = [x for x in same if x.kind == EventKind.STEP and x.target_key == sched.optimizer]
        if steps and any(x.seq < e.seq for x in steps):
            skipped = _stepped_on_skipped_iterations(ctx, sched, e, steps)
            if skipped is not None:
                out.append(skipped)
            continue
        if not steps:
            continue
        when = ""
        if e.guarded and not all(set(e.conds) <= set(x.conds) for x in steps):
            # under a condition (`if epoch > 0: scheduler.step()` skips the first epoch on purpose),
            # judged when its optimizer steps under that condition too (a training phase's
            # scheduler and optimizer on one arm): the first time the arm runs, the schedule moves
            # first; or when no condition inside the iteration changes between iterations (`if
            # epoch <= args.warm:` in the batch loop, a flag): where it holds, it holds from the
            # loop's first iteration, and skips nothing on purpose. Whether it ever holds is not
            # known: suspicious
            guards = e.guards_in(len(e.loops))
            if not guards or any(k in model.counters for k, _ in guards):
                continue
            when = " whenever its condition holds, which does not change between iterations"
        msg = (
            f"`{sched.name}.step()` ({sched.type}) runs before the optimizer's step() in the iteration{when}: "
            f'the first value of the schedule is skipped (torch warns "Detected call of `lr_scheduler.step()` '
            f"before `optimizer.step()`\") and every step uses the next iteration's learning rate"
        )
        out.append(
            RULE.finding(
                e.span,
                msg,
                confidence=SUSPICIOUS if when else CONFIRMED,
                related=(Related(steps[0].span, "the optimizer steps after it"),)
                + iteration_related(same, (e.span, steps[0].span)),
                fix=_fix(ctx, e, steps[0]),
            )
        )
    return first_by_span(out)


def _stepped_on_skipped_iterations(ctx: RuleContext, sched: Scheduler, e: Event, steps: list[Event]) -> Finding | None:
    """The scheduler steps at every iteration after its optimizer's step() in the code, but the
    optimizer steps only when a counter condition holds that the scheduler's step is not under
    (`if (i + 1) % accum == 0: optimizer.step()` then `scheduler.step()` at every micro-batch): on
    the other iterations the schedule moves with no update, on the first one before any step()."""
    model = ctx.model
    level = len(e.loops)
    mine = {k for k, _ in e.guards_in(level)}
    if any(len(x.loops) != level for x in steps) or any(k in model.counters for k in mine):
        # a scheduler under a condition of its own that changes between iterations (`if
        # step_optimizer and update_lr:`) may be the optimizer's, written again
        return None
    for x in steps:
        if not any(k in model.counters and k not in mine for k, _ in x.guards_in(level)):
            return None  # a step on every iteration where the scheduler steps
    # the condition as written: the innermost `if` around the optimizer's step that the
    # scheduler's step is not inside
    test = None
    if steps[0].span.path == e.span.path:
        around = [
            (at, text)
            for first, last, at, text in if_blocks(ctx, e.span.path, arms=True)
            if first <= steps[0].span.line <= last and not first <= e.span.line <= last
        ]
        test = max(around)[1] if around else None
    where = f"`{test}`" if test else "its condition"
    return RULE.finding(
        e.span,
        f"`{sched.name}.step()` ({sched.type}) runs at every iteration, but its optimizer steps only where {where} "
        f"holds: on the other iterations the schedule moves with no update (with gradient accumulation, a warmup "
        f"or decay that many times too fast), and on the first one it runs before any optimizer.step() (torch "
        f'warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`")',
        confidence=SUSPICIOUS,
        related=(Related(steps[0].span, f"the optimizer steps only where {where} holds"),),
    )


RULE = Rule(
    code="GA207",
    name="scheduler-before-step",
    family=LIFECYCLE,
    summary="scheduler.step() before optimizer.step() in the iteration",
    what="""
Flags a learning-rate scheduler's `step()` that runs, in a loop iteration, before its optimizer's
first `step()` of that iteration (including an epoch loop whose scheduler steps before the batch
loop). `ReduceLROnPlateau`, stepped on a validation metric, is not flagged. A scheduler step under
a condition that changes between iterations (`if epoch > 0: scheduler.step()`, which holds the
schedule back in the first epoch on purpose) is not flagged; under one that does not change
between the iterations of its loop (`if epoch <= args.warm:` inside the batch loop, a flag), it
is flagged as suspicious: wherever it holds, the schedule moves first from the loop's first
iteration on. So is a scheduler stepped at every iteration after an optimizer that steps only under
a condition that changes between iterations (`if (i + 1) % accum == 0: optimizer.step()`, then
`scheduler.step()` at every micro-batch): on the first iteration it runs before any step, and on
every skipped one the schedule moves with no update.
""",
    why="""
Since PyTorch 1.1 the scheduler must step after the optimizer. Stepping it first skips the first
value of the schedule: warmup starts late, a cosine schedule is shifted by one epoch, and torch
warns about it.
""",
    example="""
for epoch in range(epochs):
    scheduler.step()
    for x, y in loader:
        ...
        optimizer.step()
""",
    use_instead="""
for epoch in range(epochs):
    for x, y in loader:
        ...
        optimizer.step()
    scheduler.step()
""",
    severity="medium",
    lookalike="scheduler.step() runs before optimizer.step() in the iteration.",
    runtime=RuntimeCheck(
        "warns",
        (
            "torch warns that `lr_scheduler.step()` was called before `optimizer.step()`, which the "
            "script test turns into a failure"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(7, 24), nn.ReLU(), nn.Linear(24, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=8)
criterion = nn.CrossEntropyLoss()
for it in range(6):
    x, y = torch.randn(8, 7), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    scheduler.step()  # <- GA207
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(7, 24), nn.ReLU(), nn.Linear(24, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=8)
criterion = nn.CrossEntropyLoss()
for it in range(6):
    x, y = torch.randn(8, 7), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    scheduler.step()
""",
            runtime="warning: lr_scheduler.step()",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
net = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
X, Y = torch.randn(40, 5), torch.randn(40, 1)
for epoch in range(3):
    sched.step()  # <- GA207
    for i in range(0, 40, 20):
        opt.zero_grad()
        loss = nn.functional.l1_loss(net(X[i:i + 20]), Y[i:i + 20])
        loss.backward()
        opt.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(1)
net = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
X, Y = torch.randn(40, 5), torch.randn(40, 1)
for epoch in range(3):
    for i in range(0, 40, 20):
        opt.zero_grad()
        loss = nn.functional.l1_loss(net(X[i:i + 20]), Y[i:i + 20])
        loss.backward()
        opt.step()
    sched.step()
""",
            runtime="warning: lr_scheduler.step()",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, total=6):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=0.01)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: min(1.0, (s + 1) / 3))

    def on_batch_end(self):
        self.sched.step()

    def fit(self, batches):
        for xb, yb in batches:
            self.opt.zero_grad()
            loss = nn.functional.mse_loss(self.model(xb), yb)
            loss.backward()
            self.opt.step()
            self.on_batch_end()


torch.manual_seed(2)
trainer = Trainer(nn.Linear(3, 2))
for epoch in range(2):
    trainer.fit([(torch.randn(8, 3), torch.randn(8, 2)) for _ in range(3)])
""",
            runtime="trains",
            note="a warmup stepped per batch, after the optimizer",
        ),
    ),
)

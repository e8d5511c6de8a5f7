"""GA206 optimizer-in-loop."""

import ast
from collections.abc import Sequence

from ..model.findings import SAFE, Finding, Fix, Related
from ..model.model import Event, EventKind, Span
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import first_by_span, in_iteration, loop_of, statement_at, whole_lines


def _hoist(ctx: RuleContext, span: Span) -> Fix | None:
    """Move the constructing statement to just before the loop, when it reads nothing the loop sets."""
    stmt, body = statement_at(ctx, span)
    loop = loop_of(ctx, span)
    if stmt is None or loop is None or body is not loop.body:
        return None
    set_in_loop = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    reads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if reads & set_in_loop:
        return None
    src = whole_lines(ctx, span.path, stmt)
    if src is None or ctx.line(span.path, loop.lineno)[: loop.col_offset].strip():
        return None
    old = ctx.indent_of(span.path, src[0])
    new = ctx.indent_of(span.path, loop.lineno)
    text = "".join(new + ctx.line(span.path, n)[len(old) :] + "\n" for n in range(src[0], src[1] + 1))
    return Fix(
        "Build it once, before the loop",
        SAFE,
        (ctx.delete_lines(span.path, *src), ctx.replace(Span(span.path, loop.lineno, 0, loop.lineno, 0), text)),
    )


def _whole_runs(loops: tuple[int, ...], runs: Sequence[Event]) -> bool:
    """`runs` (the steps of what the iteration of `loops` builds) are all in loops inside that
    iteration, and some two loops down, in an epoch loop and a batch loop: a whole training run per
    iteration (a task of a continual run, a trial of a search, a fold), which a reset per iteration
    is meant for. A deeper loop that steps none of them (an adversarial attack's loop inside the
    batch loop, micro-batches) makes the iteration no run of its own."""
    depth = len(loops)
    return all(len(x.loops) > depth for x in runs) and any(len(x.loops) > depth + 1 for x in runs)


def _builder_call(ctx: RuleContext, new: Event | None, steps: Sequence[Event]) -> Span | None:
    """The call inside the loop of a helper that only builds the optimizer (`self.define_optimizer()`
    each epoch, the steps made elsewhere): that call is what runs in every iteration, and hoisting
    it is the fix. None when the constructor is in the loop's own code or in a helper that also
    steps (a whole epoch's function): then the constructor is the place."""
    if new is None or not new.via:
        return None
    stepping = {s for e in steps for s in e.via}
    for call in new.via:  # outermost first
        if call in stepping:
            continue
        if loop_of(ctx, call) is not None:
            return call
    return None


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    out = []
    events = model.events
    made = {e.target_key: e for e in events if e.kind == EventKind.OPT_NEW}
    for opt in model.optimizers:
        if not opt.loops or opt.fresh_params or opt.stateless or not (opt.complete or opt.args_only):
            # stateless: plain SGD rebuilt each iteration steps exactly as one built once; incomplete: what
            # it holds is not known, so neither is whether those parameters are made anew with it (an
            # agent built per run by a factory the engine cannot see). The parameters of the function's
            # own arguments are known that far: they were made before the call
            continue
        new = made.get(opt.key)
        if new is not None and any(k in model.counters for k, _ in new.guards_in(len(opt.loops))):
            # built under a condition on the iteration (`if t == offline_steps:`, every 200 epochs for
            # an evaluation run): a deliberate reset at chosen steps, not a rebuild at every step
            continue
        steps = [
            e for e in events if e.kind == EventKind.STEP and e.target_key == opt.key and in_iteration(e, opt.loops)
        ]
        if not steps or _whole_runs(opt.loops, steps):
            continue
        msg = (
            f"`{opt.name}` ({opt.type}) is built anew in every iteration of the training loop: its state (momentum, "
            f"Adam's moment estimates, step count) starts from zero at each step"
        )
        related: tuple[Related, ...] = (Related(steps[0].span, "it is stepped in the same iteration"),)
        anchor = _builder_call(ctx, new, steps)
        if anchor is not None:
            msg += " (the helper called here builds it)"
            related = (Related(opt.span, "built here"), *related)
        at = anchor or opt.span
        out.append(RULE.finding(at, msg, related=related, fix=_hoist(ctx, at)))
    opts = {o.key: o for o in model.optimizers}
    scheds = {s.key: s for s in model.schedulers}
    for e in events:
        if e.kind == EventKind.SCHED_NEW and e.loops:
            sched = scheds.get(e.target_key)
            if sched is None or not sched.counter:
                continue  # a chainable decay rebuilt each epoch continues from the current rate
            sched_opt = opts.get(sched.optimizer)
            if sched_opt is not None and sched_opt.loops[: len(e.loops)] == e.loops:
                continue  # its optimizer is new in this iteration too (a fresh model per fold)
            runs = [
                x
                for x in events
                if in_iteration(x, e.loops)
                and x.seq > e.seq
                and (
                    (x.kind == EventKind.SCHED_STEP and x.target_key == sched.key)
                    or (x.kind == EventKind.STEP and x.target_key == sched.optimizer)
                )
            ]
            if not runs:
                continue
            if _whole_runs(e.loops, runs):
                # the schedule runs its course within each iteration
                continue
            msg = (
                f"the {sched.type} scheduler is built anew in every iteration of the training loop: its step count "
                f"restarts each time, so the schedule never gets past its beginning"
            )
            out.append(
                RULE.finding(
                    e.span, msg, related=(Related(runs[0].span, "used in the same iteration"),), fix=_hoist(ctx, e.span)
                )
            )
        elif e.kind == EventKind.SCALER_NEW and e.loops:
            runs = [
                x
                for x in events
                if in_iteration(x, e.loops)
                and x.seq > e.seq
                and x.kind == EventKind.SCALER_STEP
                and x.target_key == e.target_key
            ]
            if not runs or all(len(x.loops) > len(e.loops) for x in runs):
                # none, or every one in a loop inside the iteration that builds it (a training run per
                # trial of a search, an epoch): the scale adapts over that loop's steps
                continue
            stepped = {
                x.target_key
                for x in events
                if x.kind == EventKind.STEP and x.detail == "scaler" and any(x.span == r.span for r in runs)
            }
            if stepped and all(k in opts and opts[k].loops[: len(e.loops)] == e.loops for k in stepped):
                continue  # the optimizers it steps are new in this iteration too (a whole run per trial)
            msg = (
                "the GradScaler is built anew in every iteration of the training loop: its loss scale restarts "
                "from the initial value and never adapts"
            )
            out.append(
                RULE.finding(
                    e.span, msg, related=(Related(runs[0].span, "used in the same iteration"),), fix=_hoist(ctx, e.span)
                )
            )
    return first_by_span(out)


RULE = Rule(
    code="GA206",
    name="optimizer-in-loop",
    family=LIFECYCLE,
    summary="an optimizer, LR scheduler or GradScaler constructed inside the training loop",
    what="""
Flags an optimizer, a learning-rate scheduler whose schedule depends on its step count (warmup,
`StepLR` with `step_size > 1`, `OneCycleLR`, cosine...), or a `GradScaler`, constructed inside
a loop iteration that also steps it, including in a helper called from the loop (a helper that
only builds it, `self.define_optimizer()` each epoch, is flagged at that call). An optimizer
built together with a fresh model in each iteration (an ensemble, a fold), a scheduler or
GradScaler built with the optimizers it drives (a whole run per trial), a GradScaler stepped
only in a loop inside the iteration that builds it (its scale adapts over that loop), an optimizer
or a scheduler rebuilt per task or trial and stepped only in the epoch and batch loops under it, plain SGD
without momentum (it keeps no state), and a chainable decay (`ExponentialLR`) rebuilt each epoch,
are not flagged.
""",
    why="""
Construction resets the state: momentum buffers and Adam's moment estimates restart from zero
every step (Adam then takes sign-like steps of size `lr`), a scheduler's warmup never ends, a
scaler's loss scale never adapts.
""",
    example="""
for x, y in loader:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ...
""",
    use_instead="""
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for x, y in loader:
    ...
""",
    severity="medium",
    lookalike="The optimizer, scheduler or scaler is constructed inside the loop, so its state restarts.",
    runtime=RuntimeCheck(
        "same-objects",
        (
            "`same-objects` fails when the rebuilt optimizer or scheduler is one the probe names: a new "
            "object over the same parameters each iteration"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
cnn = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 2))
criterion = nn.CrossEntropyLoss()
for it in range(3):
    x, y = torch.randn(6, 12), torch.randint(0, 2, (6,))
    optimizer = torch.optim.Adam(cnn.parameters(), lr=1e-3)  # <- GA206
    optimizer.zero_grad()
    loss = criterion(cnn(x), y)
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
cnn = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(cnn.parameters(), lr=1e-3)
for it in range(3):
    x, y = torch.randn(6, 12), torch.randint(0, 2, (6,))
    optimizer.zero_grad()
    loss = criterion(cnn(x), y)
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="it trains, with Adam's state reset at every step",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(6, 20), nn.ReLU(), nn.Linear(20, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(64, 6), torch.randn(64, 1)
for epoch in range(4):
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)  # <- GA206
    for b in range(0, 64, 32):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[b:b + 32]), Y[b:b + 32])
        loss.backward()
        optimizer.step()
    scheduler.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(6, 20), nn.ReLU(), nn.Linear(20, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(64, 6), torch.randn(64, 1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    for b in range(0, 64, 32):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(X[b:b + 32]), Y[b:b + 32])
        loss.backward()
        optimizer.step()
    scheduler.step()
""",
            runtime="trains",
            note="it trains, but the learning rate never decays",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


def attack(model, x, y, eps=0.2, steps=3):
    x_adv = x.clone()
    for _ in range(steps):
        x_adv.requires_grad_()
        (g,) = torch.autograd.grad(F.cross_entropy(model(x_adv), y), x_adv)
        x_adv = (x_adv.detach() + 0.05 * g.sign()).clamp(x - eps, x + eps)
    return x_adv.detach()


def train_epoch(model, optimizer, batches):
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2], gamma=0.1)  # <- GA206
    for x, y in batches:
        x_adv = attack(model, x, y)
        optimizer.zero_grad()
        F.cross_entropy(model(x_adv), y).backward()
        optimizer.step()
        scheduler.step()


torch.manual_seed(13)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)]
for epoch in range(3):
    train_epoch(model, optimizer, batches)
""",
            runtime="trains",
            note="the attack loop inside the batch loop makes no run per epoch: the rate drops tenfold each epoch",
        ),
        Example(
            """import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model

    def define_optimizer(self):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def train(self, batches, epochs=3):
        for epoch in range(epochs):
            self.define_optimizer()  # <- GA206
            for x, y in batches:
                self.optimizer.zero_grad()
                nn.functional.mse_loss(self.model(x), y).backward()
                self.optimizer.step()


torch.manual_seed(3)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)]
Trainer(nn.Linear(4, 1)).train(batches)
""",
            fixed="""import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model

    def define_optimizer(self):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def train(self, batches, epochs=3):
        self.define_optimizer()
        for epoch in range(epochs):
            for x, y in batches:
                self.optimizer.zero_grad()
                nn.functional.mse_loss(self.model(x), y).backward()
                self.optimizer.step()


torch.manual_seed(3)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)]
Trainer(nn.Linear(4, 1)).train(batches)
""",
            runtime="trains",
            note="a helper that only builds the optimizer, called in the epoch loop: the finding is at that call",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn

X = torch.randn(50, 5)
Y = X[:, :1] * 2 - X[:, 1:2]
for fold in range(2):
    torch.manual_seed(fold)
    model = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
""",
            runtime="trains",
            note="a new model and its optimizer for each fold",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(2)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(32, 4), torch.randn(32, 1)
for epoch in range(3):
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
    optimizer.zero_grad()
    nn.functional.mse_loss(model(X), Y).backward()
    optimizer.step()
    scheduler.step()
""",
            runtime="trains",
            note="a chainable decay continues from the current rate",
        ),
    ),
)

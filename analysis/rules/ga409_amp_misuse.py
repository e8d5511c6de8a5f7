"""GA409 amp-misuse."""

import ast

from ..model.findings import SAFE, SUSPICIOUS, Finding, Fix, Related
from ..model.model import Event, EventKind
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import (
    BACKWARDS,
    first_by_span,
    in_iteration,
    insert_after,
    loop_of,
    own_event,
    receiver,
    statement_at,
)


def _scaler_step_fix(ctx: RuleContext, plain: Event, scaler_event: Event) -> Fix | None:
    """`opt.step()` -> `scaler.step(opt)` + `scaler.update()`."""
    opt = receiver(ctx.text(plain.span), "step")
    scale_call = ctx.text(scaler_event.span)
    scaler = scale_call.split(".scale(")[0] if ".scale(" in scale_call else None
    stmt, _ = statement_at(ctx, plain.span)
    if not opt or not scaler or stmt is None:
        return None
    after = insert_after(ctx, plain.span.path, stmt, f"{scaler}.update()")
    if after is None:
        return None
    return Fix(
        f"Step through the scaler: `{scaler}.step({opt})`, then `{scaler}.update()`",
        SAFE,
        (ctx.replace(plain.span, f"{scaler}.step({opt})"), after),
    )


def _update_fix(ctx: RuleContext, scaler_step: Event) -> Fix | None:
    text = ctx.text(scaler_step.span)
    scaler = text.split(".step(")[0] if ".step(" in text else None
    stmt, _ = statement_at(ctx, scaler_step.span)
    if not scaler or stmt is None:
        return None
    edit = insert_after(ctx, scaler_step.span.path, stmt, f"{scaler}.update()")
    return Fix(f"Call `{scaler}.update()` after the step", SAFE, (edit,)) if edit else None


def _steps_loop_target(ctx: RuleContext, e: Event) -> bool:
    """`for opt in optimizers: scaler.step(opt)`: the step's argument is the target of the loop
    right around it (the optimizers the engine could not list one by one)."""
    inner = loop_of(ctx, e.span)
    if not isinstance(inner, (ast.For, ast.AsyncFor)) or not isinstance(inner.target, ast.Name):
        return False
    for n in ast.walk(inner):
        if isinstance(n, ast.Call) and n.lineno == e.span.line and isinstance(n.func, ast.Attribute):
            if n.func.attr == "step" and len(n.args) == 1 and isinstance(n.args[0], ast.Name):
                return n.args[0].id == inner.target.id
    return False


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    events = model.events
    out = []
    # a scaler made, or one handed in and used (a trainer's `scaler` argument, interp/ducks.py)
    scalers = [e for e in events if e.kind in (EventKind.SCALER_NEW, EventKind.SCALER_SCALE)]
    for step in model.steps:
        bw = own_event(step)
        if bw is None:
            continue
        before = [e for e in step.events if e.seq < bw.seq and not e.exclusive(bw)]
        last_bw = max((e.seq for e in before if e.kind in BACKWARDS), default=-1)
        scaled = [e for e in before if e.kind == EventKind.SCALER_SCALE and e.seq > last_bw]
        if scaled:
            # the steps that consume this backward's gradients: before the next backward, the first per optimizer
            after = sorted((e for e in step.events if e.seq > bw.seq and not e.exclusive(bw)), key=lambda e: e.seq)
            consumed, mine = set(), []
            for e in after:
                if e.kind in BACKWARDS:
                    break
                if e.kind == EventKind.STEP and e.target_key in step.stepped and e.target_key not in consumed:
                    consumed.add(e.target_key)
                    mine.append(e)
            for st in mine:
                if st.detail != "scaler":
                    msg = (
                        "the loss was multiplied by the GradScaler's scale (`scaler.scale(loss).backward()`), but the "
                        "optimizer steps directly: it applies gradients thousands of times too large (never "
                        "unscaled, no inf check) and the weights blow up to inf/NaN; use `scaler.step(optimizer)`"
                    )
                    out.append(
                        RULE.finding(
                            st.span,
                            msg,
                            related=(Related(scaled[-1].span, "the loss is scaled here"),),
                            fix=_scaler_step_fix(ctx, st, scaled[-1]),
                        )
                    )
    for e in events:
        if e.kind == EventKind.SCALER_STEP:
            levels = e.loops
            stepped_here = {x.target_key for x in events if x.kind == EventKind.STEP and x.span == e.span}
            if (len(stepped_here) > 1 or _steps_loop_target(ctx, e)) and levels:
                # `for opt in optimizers: scaler.step(opt)`, then one update: each optimizer steps
                # once per iteration of the loop around (torch keeps the step state per optimizer)
                levels = levels[:-1]
            same = [x for x in events if in_iteration(x, levels)]
            if levels and not any(x.kind == EventKind.SCALER_UPDATE and x.target_key == e.target_key for x in same):
                msg = (
                    "`scaler.step()` runs every iteration but `scaler.update()` never does: the second step raises "
                    '"step() has already been called since the last update()" (and the scale never adapts)'
                )
                out.append(RULE.finding(e.span, msg, fix=_update_fix(ctx, e)))
        elif e.kind == EventKind.UNSCALE and e.loops:
            finding = _unscaled_without_update(ctx, e, events)
            if finding is not None:
                out.append(finding)
        elif e.kind == EventKind.AUTOCAST and e.detail.endswith("float16") and "bfloat16" not in e.detail:
            if not scalers:
                trains = (
                    any(in_iteration(x, e.loops) and x.kind in BACKWARDS for x in events)
                    if e.loops
                    else any(x.kind in BACKWARDS for x in events)
                )
                if trains:
                    msg = (
                        "float16 autocast in a training step with no GradScaler: float16 gradients below ~6e-8 "
                        "underflow to exactly 0, so small gradients vanish (and large ones can overflow); scale the "
                        "loss with `torch.amp.GradScaler`, or use bfloat16"
                    )
                    out.append(RULE.finding(e.span, msg, confidence=SUSPICIOUS))
            elif e.loops and (plain := _unscaled_backward(ctx, e, events)) is not None:
                msg = (
                    "float16 autocast in a training step whose `backward()` does not go through the GradScaler "
                    "(the scaler serves another step): float16 gradients below ~6e-8 underflow to exactly 0, so "
                    "small gradients vanish; `scaler.scale(loss).backward()` and `scaler.step(optimizer)` here "
                    "too, or use bfloat16"
                )
                related = (Related(plain.span, "this backward() is not scaled"),)
                out.append(RULE.finding(e.span, msg, confidence=SUSPICIOUS, related=related))
    return first_by_span(out)


def _unscaled_backward(ctx: RuleContext, cast: Event, events: tuple[Event, ...]) -> Event | None:
    """A tensor's own `backward()` run inside a float16 autocast block with no
    `scaler.scale(...)` since the backward before it: in a program whose scaler serves another step
    (rl_games' critic scaled its loss in `train_on_batch`, not in the `calc_gradients` that
    `train_net`'s autocast ran). A framework's `backward(loss)` may scale on its own: not counted."""
    tree = ctx.tree(cast.span.path)
    if tree is None:
        return None
    block = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.With, ast.AsyncWith))
            and any(i.context_expr.lineno == cast.span.line for i in n.items)
        ),
        None,
    )
    if block is None:
        return None
    first, last = block.lineno, block.end_lineno or block.lineno

    def inside(x: Event) -> bool:
        # run in the `with` block: there, or in a call made there
        return any(s.path == cast.span.path and first <= s.line <= last for s in (x.span, *x.via))

    window = sorted((x for x in events if in_iteration(x, cast.loops)), key=lambda x: x.seq)
    since = False  # a scale() since the last backward
    for x in window:
        if x.kind == EventKind.SCALER_SCALE:
            since = True
        elif x.kind in BACKWARDS:
            if x.kind == EventKind.BACKWARD and not since and inside(x) and _plain_backward(ctx, x):
                return x
            since = False
    return None


def _plain_backward(ctx: RuleContext, e: Event) -> bool:
    """`loss.backward()` (no positional argument), not `accelerator.backward(loss)`."""
    try:
        call = ast.parse(ctx.text(e.span).strip(), mode="eval").body
    except SyntaxError:
        return False
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and not call.args


def _unscaled_without_update(ctx: RuleContext, unscale: Event, events: tuple[Event, ...]) -> Finding | None:
    """`scaler.unscale_(opt)`, then `scaler.update()` only under a condition the unscale_ does not run
    under (a step skipped when the gradient norm is too large): on that path the next iteration's
    unscale_() raises "unscale_() has already been called on this optimizer since the last update()"."""
    later = [
        x
        for x in events
        if x.kind == EventKind.SCALER_UPDATE
        and x.seq > unscale.seq
        and in_iteration(x, unscale.loops)
        and not x.exclusive(unscale)
    ]
    if not later:
        return None  # no update in the iteration at all: GA409's other case, or an update elsewhere
    mine = set(unscale.conds)
    for upd in later:
        extra = [c for c in upd.conds if c not in mine]
        if not extra or (upd.literals and upd.literals <= unscale.literals):
            return None  # an update runs wherever the unscale_ does
    upd = later[0]
    msg = (
        "`scaler.unscale_()` runs where `scaler.update()` may not (the update sits under a condition the "
        "unscale_() does not, such as a step skipped for a too-large gradient norm): on that path the next "
        "iteration's unscale_() raises \"unscale_() has already been called on this optimizer since the last "
        'update()"; call `scaler.update()` on every path after unscale_()'
    )
    return RULE.finding(
        unscale.span,
        msg,
        confidence=SUSPICIOUS,
        related=(Related(upd.span, "`scaler.update()`, only under a condition"),),
    )


RULE = Rule(
    code="GA409",
    name="amp-misuse",
    family=NUMERICAL,
    # not a hazard at one op: "no GradScaler", "never update()" lean on the whole run
    premises=("hazard", "together", "complete"),
    summary="float16 autocast without GradScaler, or a GradScaler used half-way",
    what="""
Flags float16 `autocast` regions in a training step when no `GradScaler` exists, or only one built
with `enabled=False`, whose `scale()` gives the loss back unscaled, or when the block runs a
tensor's own `backward()` that does not go through the scaler another step uses (suspicious:
whether gradients underflow depends on their size); a plain `optimizer.step()` after
`scaler.scale(loss).backward()`; and `scaler.step()` in a loop that never calls
`scaler.update()`. bfloat16 autocast, which needs no scaler, is not flagged.
""",
    why="""
float16 represents nothing below ~6e-8: without loss scaling small gradients become exactly 0. A
scaled loss stepped directly applies gradients multiplied by the scale (65536 by default) with no
inf check. `scaler.step()` without `update()` raises at the second iteration.
""",
    example="""
scaler.scale(loss).backward()
optimizer.step()
""",
    use_instead="""
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update()
""",
    severity="medium",
    lookalike="float16 autocast without a working GradScaler step/update sequence.",
    runtime=RuntimeCheck(
        None,
        (
            "no runtime check on CPU: float16 gradients underflow or overflow on the GPU the script is "
            "meant for, which a CPU probe does not run"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cpu"
net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(device)
X, Y = torch.randn(64, 8), torch.randn(64, 1)
for it in range(4):
    opt.zero_grad()
    with torch.autocast(device, dtype=torch.float16):
        loss = nn.functional.mse_loss(net(X), Y)
    scaler.scale(loss).backward()
    opt.step()  # <- GA409
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cpu"
net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(device)
X, Y = torch.randn(64, 8), torch.randn(64, 1)
for it in range(4):
    opt.zero_grad()
    with torch.autocast(device, dtype=torch.float16):
        loss = nn.functional.mse_loss(net(X), Y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
""",
            runtime="nonfinite",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
device = "cpu"
clf = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(clf.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device, init_scale=1024.0)
for it in range(3):
    xb, yb = torch.randn(16, 10), torch.randint(0, 3, (16,))
    optimizer.zero_grad()
    with torch.autocast(device, dtype=torch.float16):
        loss = nn.functional.cross_entropy(clf(xb), yb)
    scaler.scale(loss).backward()
    scaler.step(optimizer)  # <- GA409
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(1)
device = "cpu"
clf = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(clf.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device, init_scale=1024.0)
for it in range(3):
    xb, yb = torch.randn(16, 10), torch.randint(0, 3, (16,))
    optimizer.zero_grad()
    with torch.autocast(device, dtype=torch.float16):
        loss = nn.functional.cross_entropy(clf(xb), yb)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
            runtime="error: step() has already been called since the last update()",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn


def amp_update(scaler, optimizer, loss):
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


torch.manual_seed(2)
device = "cpu"
model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device)
X, y = torch.randn(96, 16), torch.randint(0, 4, (96,))
for it in range(3):
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device, dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = nn.functional.cross_entropy(model(X), y)
    amp_update(scaler, opt, loss)
""",
            runtime="trains",
            note="bfloat16 without a scaler; float16 with the scaler in a helper",
        ),
    ),
)

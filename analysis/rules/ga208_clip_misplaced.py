"""GA208 clip-misplaced."""

import ast

from ..model.findings import SAFE, SUSPICIOUS, Finding, Fix, Related
from ..model.model import Event, EventKind, Param, ProgramModel
from ..source.prebuilt import replace
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import (
    ACCELERATE_STEPS,
    BACKWARDS,
    first_by_span,
    in_iteration,
    insert_before,
    iteration_related,
    modulo_divisor,
    move_statement,
    statement_at,
    step_by_seq,
    whole_lines,
)


def _move_after(ctx: RuleContext, clip: Event, anchor: Event, message: str) -> Fix | None:
    c, cbody = statement_at(ctx, clip.span)
    a, abody = statement_at(ctx, anchor.span)
    if c is None or a is None or cbody is not abody or clip.span.path != anchor.span.path:
        return None
    edits = move_statement(ctx, clip.span.path, c, a)
    return Fix(message, SAFE, edits) if edits else None


def _unscale(ctx: RuleContext, clip: Event, scaler_step: Event) -> Fix | None:
    call = ctx.text(scaler_step.span)
    if not call or "(" not in call:
        return None
    head, _, rest = call.partition(".step(")
    if not rest.endswith(")") or not head:
        return None
    c, _ = statement_at(ctx, clip.span)
    edit = insert_before(ctx, clip.span.path, c, f"{head}.unscale_({rest[:-1]})") if c is not None else None
    return Fix(f"Unscale before clipping: `{head}.unscale_({rest[:-1]})`", SAFE, (edit,)) if edit else None


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    by_seq = step_by_seq(model)
    ducks = {o.key for o in model.optimizers if o.duck}
    out = []
    for clip in model.events:
        if clip.kind != EventKind.CLIP or not clip.params:
            continue
        same = [e for e in model.events if in_iteration(e, clip.loops) and not e.exclusive(clip)]
        mine = clip.params

        def reaches(e: Event, mine: frozenset[Param] = mine) -> bool:
            s = by_seq.get(e.seq)
            return s is not None and _covers(s.reached | s.reached_weak, mine)

        backs = [e for e in same if e.kind in BACKWARDS and reaches(e)]
        stepped = {e.target_key for e in same if e.kind == EventKind.STEP}

        def holds(e: Event, mine: frozenset[Param] = mine, stepped: set[int] = stepped) -> bool:
            # an optimizer handed in (a duck: of parameters the engine cannot name) may hold the
            # clipped ones when it is the only one stepped in the iteration; its premise says so
            return bool(e.params & mine) or (e.target_key in ducks and stepped == {e.target_key})

        steps = [e for e in same if e.kind == EventKind.STEP and holds(e)]
        all_steps = steps
        before = [e for e in backs if e.seq < clip.seq]
        after = [e for e in backs if e.seq > clip.seq]
        if clip.guarded:
            # a clip under a condition (`if args.clip:`) is judged only against a step that ran
            # under no condition the clip did not: whenever the clip runs, that step ran before it
            # (a clip after the step, both under the accumulation counter's `if`)
            steps = [e for e in steps if set(e.conds) <= set(clip.conds)]
            after = []
        if not before and after:
            msg = (
                "gradients are clipped before `backward()` computes them: the clip sees the previous (or no) "
                "gradients and the step applies the new ones unclipped"
            )
            out.append(
                RULE.finding(
                    clip.span,
                    msg,
                    related=(Related(after[0].span, "backward() comes after the clip"),),
                    fix=_move_after(ctx, clip, after[0], "Clip after backward()"),
                )
            )
            continue
        done = [e for e in steps if e.seq < clip.seq and (not before or e.seq > before[-1].seq)]
        if before and done:
            msg = (
                "gradients are clipped after the optimizer's step(): the step already applied them unclipped, and "
                "the clipped values are thrown away by the next zero_grad()"
            )
            out.append(
                RULE.finding(clip.span, msg, related=(Related(done[0].span, "the step applies them before the clip"),))
            )
            continue
        if not before:
            continue
        divisor = _accumulated(ctx, clip, steps)
        if divisor is not None:
            accelerate = divisor == f"once every `{ACCELERATE_STEPS}`"
            msg = (
                f"gradients are clipped after every micro-batch's backward() while the step runs {divisor}"
                + (" (inside `accelerator.accumulate(...)`)" if accelerate else "")
                + ": each clip rescales the partial sum accumulated so far, so the gradient the step "
                "applies is never clipped as a whole (the earlier micro-batches are shrunk again and again, the "
                "last one not at all); "
                + ("clip only under `if accelerator.sync_gradients:`" if accelerate else _CLIP_ONCE)
            )
            out.append(
                RULE.finding(
                    clip.span,
                    msg,
                    confidence=SUSPICIOUS,
                    related=(Related(steps[0].span, f"the step, {divisor}"),),
                    # in an accumulate block the step is in the same block: moving the clip there changes nothing
                    fix=None if accelerate else _move_before(ctx, clip, steps[0]),
                )
            )
            continue
        last = before[-1]
        scaled = any(e.kind == EventKind.SCALER_SCALE and e.seq < last.seq for e in same)
        # whenever a clip runs after a scaled backward, it sees scaled gradients, whatever
        # condition the step that follows runs under
        scaler_steps = [e for e in all_steps if e.detail == "scaler" and e.seq > clip.seq]
        unscaled = any(e.kind == EventKind.UNSCALE and holds(e) and last.seq < e.seq < clip.seq for e in same)
        if scaled and scaler_steps and not unscaled:
            msg = (
                "gradients are clipped while still multiplied by the GradScaler's scale: the threshold applies to "
                "scaled values (thousands of times larger), so the clip is wrong at every step; call "
                "`scaler.unscale_(optimizer)` first"
            )
            out.append(
                RULE.finding(
                    clip.span,
                    msg,
                    related=(Related(scaler_steps[0].span, "scaler.step() unscales only after the clip"),),
                    fix=_unscale(ctx, clip, scaler_steps[0]),
                )
            )
    return first_by_span(
        [
            replace(
                f,
                related=f.related
                + iteration_related(
                    [e for e in model.events if in_iteration(e, _loops_of(f, model))],
                    [f.span] + [r.span for r in f.related],
                ),
            )
            for f in out
        ]
    )


_CLIP_ONCE = "clip once, just before the step"


def _accumulated(ctx: RuleContext, clip: Event, steps: list[Event]) -> str | None:
    """The divisor of the accumulation (`if (i + 1) % n == 0:` around every step of the clipped
    parameters) when the clip runs in every iteration, outside that condition; else None.
    Suspicious: with n = 1 (a configuration's default) the clip is where it belongs."""
    if clip.guarded or not steps or not clip.loops:
        return None
    level = len(clip.loops)
    counters = ctx.model.counters
    if not all(any(k in counters for k, _ in e.guards_in(level)) for e in steps):
        return None
    divisors = {modulo_divisor(ctx, e) for e in steps}
    if len(divisors) == 1 and None not in divisors:
        return f"once every `{divisors.pop()}`"
    # `if train_state.acc_step == 0:` (lingua): a counter that comes back to one value per step
    tests = {_counter_test(ctx, e) for e in steps}
    if len(tests) == 1 and None not in tests:
        return f"only when `{tests.pop()}`"
    return None


def _counter_test(ctx: RuleContext, event: Event) -> str | None:
    """The text of `counter == k` of the innermost `if` around `event` (its branch the engine
    found to change between iterations), else None."""
    key = f"counter-tests:{event.span.path}"
    found = ctx.cache.get(key)
    if found is None:
        found = []
        tree = ctx.tree(event.span.path)
        for node in ast.walk(tree) if tree is not None else ():
            t = node.test if isinstance(node, ast.If) else None
            if (
                isinstance(node, ast.If)
                and isinstance(t, ast.Compare)
                and len(t.ops) == 1
                and isinstance(t.ops[0], ast.Eq)
                and isinstance(t.comparators[0], ast.Constant)
                and type(t.comparators[0].value) is int
                and isinstance(t.left, (ast.Name, ast.Attribute))
            ):
                last = node.body[-1].end_lineno or node.body[-1].lineno
                found.append((node.body[0].lineno, last, ctx.text_of_node(event.span.path, t)))
        ctx.cache[key] = found
    inner = [f for f in found if f[0] <= event.span.line <= f[1]]
    return min(inner, key=lambda f: f[1] - f[0])[2] if inner else None


def _move_before(ctx: RuleContext, clip: Event, step: Event) -> Fix | None:
    """Move the clip into the accumulation's `if`, just before the step."""
    c, _ = statement_at(ctx, clip.span)
    s, _ = statement_at(ctx, step.span)
    if c is None or s is None or clip.span.path != step.span.path:
        return None
    lines = whole_lines(ctx, clip.span.path, c)
    if lines is None or lines[0] != lines[1]:
        return None  # a statement over several lines: not moved by hand here
    edit = insert_before(ctx, step.span.path, s, ctx.text_of_node(clip.span.path, c))
    if edit is None:
        return None
    return Fix("Clip just before the step", SAFE, (edit, ctx.delete_lines(clip.span.path, *lines)))


def _covers(reached: frozenset[Param], mine: frozenset[Param]) -> bool:
    """The loss reaches some of the clipped parameters: one of them, or the parameters of an
    unknown value holding them (`model`'s hold `model.module`'s: `clip_grad_norm_(model.module
    .parameters())` after a loss of `model(x)`, both handed in)."""
    if reached & mine:
        return True
    heads = tuple(p.name + "." for p in reached if p.opaque)
    return bool(heads) and any(p.opaque and p.name.startswith(heads) for p in mine)


def _loops_of(finding: Finding, model: ProgramModel) -> tuple[int, ...]:
    clip = next((e for e in model.events if e.kind == EventKind.CLIP and e.span == finding.span), None)
    return clip.loops if clip is not None else ()


RULE = Rule(
    code="GA208",
    name="clip-misplaced",
    family=LIFECYCLE,
    summary="gradient clipping before backward(), after step(), or on scaled gradients",
    what="""
Flags `clip_grad_norm_`/`clip_grad_value_` that runs, in an iteration, before the `backward()`
that computes the gradients it should clip, after the `step()` that applies them, or between a
`GradScaler`'s scaled backward and `scaler.step()` without `scaler.unscale_(optimizer)` first. In
a gradient accumulation (the step under `if (i + 1) % n == 0:`, or under a counter's `if acc_step ==
0:`), a clip that runs after every
micro-batch, outside that condition, is suspicious: it clips partial sums, never the accumulated
gradient the step applies (with n = 1 it is where it belongs). So is a clip inside Hugging Face
accelerate's `with accelerator.accumulate(model):` that is not under `if
accelerator.sync_gradients:`: the prepared optimizer steps only on the micro-batch that syncs, the
clip runs on every one.
""",
    why="""
Clipping only makes sense between `backward()` and `step()`, on the real gradients. Before the
backward it clips the wrong (old or empty) gradients; after the step it clips gradients already
applied; under a GradScaler the gradients are still multiplied by the loss scale, so a
`max_norm=1.0` clips almost everything to a tiny update.
""",
    example="""
scaler.scale(loss).backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
scaler.step(optimizer)
""",
    use_instead="""
scaler.scale(loss).backward()
scaler.unscale_(optimizer)
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
scaler.step(optimizer)
""",
    severity="medium",
    lookalike="The clipping call is outside the window between backward() and step() (or before unscale_()).",
    runtime=RuntimeCheck("cleared", "`cleared` fails: the step applies gradients other than what the clipping left"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
X, Y = torch.randn(64, 8), torch.randn(64, 1) * 50
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
for it in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # <- GA208
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
X, Y = torch.randn(64, 8), torch.randn(64, 1) * 50
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
for it in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
""",
            runtime="trains",
            note="it trains with unclipped gradients",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
device = "cpu"
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 12)
for it in range(3):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    optimizer.zero_grad()
    with torch.autocast(device, dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # <- GA208
    scaler.step(optimizer)
    scaler.update()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(1)
device = "cpu"
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 12)
for it in range(3):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    optimizer.zero_grad()
    with torch.autocast(device, dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
""",
            runtime="trains",
            note="it trains, with every step clipped to a tiny update",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn


def clip_gradients(module, limit=0.5):
    nn.utils.clip_grad_value_(module.parameters(), clip_value=limit)


torch.manual_seed(2)
policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 3))
optim = torch.optim.RMSprop(policy.parameters(), lr=3e-3)
for episode in range(3):
    dist = torch.distributions.Categorical(logits=policy(torch.randn(20, 4)))
    actions = dist.sample()
    loss = -(dist.log_prob(actions) * torch.randn(20)).mean()
    optim.zero_grad()
    loss.backward()
    clip_gradients(policy)
    optim.step()
""",
            runtime="trains",
            note="clipping in a helper, between backward and step",
        ),
    ),
)

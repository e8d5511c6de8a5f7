"""GA203 step-before-backward."""

from ..model.findings import SAFE, Finding, Fix, Related
from ..model.model import Event, EventKind
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .common import names
from .lifecycle import (
    BACKWARDS,
    call_of,
    clears,
    first_by_span,
    iteration_related,
    move_statement,
    optimizers,
    own_event,
    statement_at,
    steps_of,
)


def _fix(ctx: RuleContext, step_event: Event, bw: Event) -> Fix | None:
    """Move the step() to just after the backward()."""
    s, sbody = statement_at(ctx, step_event.span)
    b, bbody = statement_at(ctx, bw.span)
    if s is None or b is None or sbody is not bbody or step_event.span.path != bw.span.path:
        return None
    edits = move_statement(ctx, bw.span.path, s, b)
    return Fix("Call step() after backward()", SAFE, edits) if edits else None


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
            if opt is None or not opt.params & written:
                continue
            for st in steps_of(step.events, key):
                if st.seq > bw.seq or st.detail == "closure" or st.guarded or st.exclusive(bw):
                    continue
                before = [e for e in step.events if e.seq < st.seq]
                if any(e.kind in BACKWARDS for e in before):
                    continue  # a backward earlier in the iteration: the step has gradients to apply
                cleared = [e for e in before if clears(e, opt.params, opt) and not e.guarded]
                if not cleared:
                    continue  # nothing cleared: the step applies last iteration's gradients (see GA201)
                msg = (
                    f"{call_of(opt, 'step')} runs before `{step.loss}.backward()` in the iteration, right after the "
                    f"gradients were cleared: it applies no gradient, and the one backward() computes is cleared "
                    f"before the next step, so the parameters never change"
                )
                out.append(
                    RULE.finding(
                        st.span,
                        msg,
                        params=names(opt.params),
                        related=(
                            Related(cleared[-1].span, "the gradients are cleared here"),
                            Related(step.span, f"`{step.loss}.backward()` comes after the step"),
                        )
                        + iteration_related(step.events, (st.span, cleared[-1].span, step.span)),
                        fix=_fix(ctx, st, bw),
                    )
                )
    return first_by_span(out)


RULE = Rule(
    code="GA203",
    name="step-before-backward",
    family=LIFECYCLE,
    summary="step() before backward() within an iteration",
    what="""
Flags an optimizer's `step()` that runs, within an iteration, after its gradients were cleared and
before the `backward()` that computes them, with no earlier `backward()` in the iteration. A
`step(closure)` (LBFGS), whose closure runs the backward, is not flagged.
""",
    why="""
The step applies the cleared (zero or `None`) gradients, so nothing changes; the gradients the
backward then computes are cleared again at the start of the next iteration. The model never
trains while the loss goes on printing.
""",
    example="""
optimizer.zero_grad()
loss = criterion(model(x), y)
optimizer.step()
loss.backward()
""",
    use_instead="""
optimizer.zero_grad()
loss = criterion(model(x), y)
loss.backward()
optimizer.step()
""",
    severity="high",
    lookalike="step() runs before the iteration's first backward().",
    runtime=RuntimeCheck(
        "updates",
        (
            "`updates` or `cleared` fails: step() runs before the iteration's gradient exists, so it "
            "applies none or the previous iteration's"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.SmoothL1Loss()
for i in range(4):
    x = torch.randn(16, 8)
    opt.zero_grad()
    loss = criterion(model(x), x.sum(1, keepdim=True))
    opt.step()  # <- GA203
    loss.backward()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.SmoothL1Loss()
for i in range(4):
    x = torch.randn(16, 8)
    opt.zero_grad()
    loss = criterion(model(x), x.sum(1, keepdim=True))
    loss.backward()
    opt.step()
""",
            runtime="no-update: model",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
X = torch.randn(60, 4)
y = (X[:, 0] > 0).float()
model = nn.Linear(4, 1)
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)
bce = nn.BCEWithLogitsLoss()


def closure():
    opt.zero_grad()
    loss = bce(model(X).squeeze(1), y)
    loss.backward()
    return loss


for outer in range(3):
    opt.step(closure)
""",
            runtime="trains",
            note="the closure runs the backward inside step()",
        ),
    ),
)

"""GA204 backward-without-step."""

from ..model.findings import CONFIRMED, SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import EventKind, Optimizer, Step
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names
from .lifecycle import first_by_span, insert_after, name_of, statement_at


def _fix(ctx: RuleContext, step: Step, opt: Optimizer) -> Fix | None:
    stmt, _ = statement_at(ctx, step.span)
    if stmt is None or opt.name.startswith("<") or not opt.name.replace(".", "").replace("_", "").isalnum():
        return None
    edit = insert_after(ctx, step.span.path, stmt, f"{opt.name}.step()")
    return Fix(f"Step `{opt.name}` after the backward()", UNSAFE, (edit,)) if edit else None


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    if model.incomplete:
        return []  # a step() may sit in code the engine did not reach
    stepped = {e.target_key for e in model.events if e.kind == EventKind.STEP}
    out = []
    for step in model.steps:
        if step.kind != EventKind.BACKWARD:
            continue
        for opt in step.optimizers:
            if opt.key in stepped or opt.escaped:
                continue
            # held by another optimizer that does step: they change
            idle = (step.reached & opt.params) - step.frozen - step.maybe_frozen - model.manual - model.written
            idle -= step.trained
            # an input made a leaf (an attack's perturbation, `Variable(x, requires_grad=True)`, remade
            # each iteration) is differentiated with respect to and moved by hand: an optimizer that only
            # clears it is no defect
            idle = frozenset(p for p in idle if p.kind == "param" or p.opaque or (p.kind == "leaf" and not p.in_loop))
            # a module given weights by load_state_dict (a DQN's target network synced from the online
            # one, a soft update through a mixed state dict) changes, whatever its own optimizer does
            idle = frozenset(p for p in idle if p.origin != "loaded")
            unseen = False
            if not idle and not step.reached:
                # the loss reaches the parameters of a model the engine cannot see (`self.model(x)` of
                # a model handed to the trainer), and the optimizer was built from that same model's
                # parameters: what the backward reaches there is what it holds
                idle = frozenset(p for p in step.reached_weak & opt.params if p.opaque) - model.written
                # held by another optimizer that steps (the one a method builds for its own loop): they change
                idle -= frozenset(p for o in step.optimizers if o.key in stepped for p in o.params)
                unseen = True
            if not idle:
                continue
            msg = (
                f"`{step.loss}.backward()` computes gradients for {describe(idle)}, but {name_of(opt)}, which "
                f"holds them, never steps: they never change"
                + (" (the loss reaches them through code the engine could not follow)" if unseen else "")
            )
            out.append(
                RULE.finding(
                    step.span,
                    msg,
                    confidence=SUSPICIOUS if unseen else CONFIRMED,
                    params=names(idle),
                    related=(Related(opt.span, f"{name_of(opt)} ({opt.type}) is built here and never stepped"),),
                    fix=_fix(ctx, step, opt),
                )
            )
    return first_by_span(out)


RULE = Rule(
    code="GA204",
    name="backward-without-step",
    family=LIFECYCLE,
    summary="backward() runs but that optimizer's step() is never reached",
    what="""
Flags a `backward()` whose loss reaches parameters held by an optimizer that is never stepped
anywhere in the program (directly, through `scaler.step(optimizer)`, or in a helper). An optimizer
handed to code the engine cannot see (a trainer from a library) is not flagged.
""",
    why="""
Gradients are computed and thrown away: those parameters never change. With two optimizers (an
encoder's and a decoder's), forgetting one `step()` silently freezes half the model.
""",
    example="""
opt_enc.zero_grad(); opt_dec.zero_grad()
loss.backward()
opt_dec.step()          # opt_enc is never stepped
""",
    use_instead="""
opt_enc.zero_grad(); opt_dec.zero_grad()
loss.backward()
opt_dec.step()
opt_enc.step()
""",
    severity="high",
    premises=("step", "optimizer", "writes"),
    lookalike="No step() of the optimizer is reached after this backward().",
    runtime=RuntimeCheck("updates", "`updates` fails: the optimizer never steps after this backward()"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 6))
dec = nn.Linear(6, 3)
opt_enc = torch.optim.SGD(enc.parameters(), lr=0.05)
opt_dec = torch.optim.SGD(dec.parameters(), lr=0.05)
for it in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    loss = nn.functional.cross_entropy(dec(enc(x)), y)
    loss.backward()  # <- GA204
    opt_dec.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 6))
dec = nn.Linear(6, 3)
opt_enc = torch.optim.SGD(enc.parameters(), lr=0.05)
opt_dec = torch.optim.SGD(dec.parameters(), lr=0.05)
for it in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    loss = nn.functional.cross_entropy(dec(enc(x)), y)
    loss.backward()
    opt_enc.step()
    opt_dec.step()
""",
            runtime="no-update: enc",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn


def backward_pass(loss):
    loss.backward()


def optimizer_step(opt):
    opt.step()
    opt.zero_grad(set_to_none=True)


torch.manual_seed(1)
net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.Adam(net.parameters(), lr=5e-3)
for epoch in range(3):
    x, y = torch.randn(10, 3), torch.randn(10, 2)
    backward_pass(nn.functional.mse_loss(net(x), y))
    optimizer_step(opt)
""",
            runtime="trains",
            note="backward and step in helpers",
        ),
    ),
)

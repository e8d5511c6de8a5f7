"""GA204 backward-without-step."""

from ..model.findings import CONFIRMED, SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import Event, EventKind, Optimizer, ProgramModel, Step
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names
from .lifecycle import BACKWARDS, first_by_span, insert_after, name_of, own_event, statement_at


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
    steps_of: dict[int, list[Event]] = {}
    for e in model.events:
        if e.kind == EventKind.STEP:
            steps_of.setdefault(e.target_key, []).append(e)
    out = []
    for step in model.steps:
        if step.kind != EventKind.BACKWARD:
            continue
        for opt in step.optimizers:
            if opt.escaped:
                continue
            if opt.key in steps_of:
                out.extend(_stepped_after_the_loop(model, step, opt, steps_of[opt.key]))
                continue
            idle = _idle(model, step, opt)
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
                idle = _unseen_idle(model, step, opt)
                # held by another optimizer that steps (the one a method builds for its own loop): they change
                idle -= frozenset(p for o in step.optimizers if o.key in steps_of for p in o.params)
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


def _idle(model: ProgramModel, step: Step, opt: Optimizer, trained: frozenset | None = None) -> frozenset:
    """What the loss reaches of `opt`'s parameters that nothing else changes: not frozen, not updated
    by hand or written, and not held by another optimizer that steps for this loss (`trained`, the
    step's own by default)."""
    idle = (step.reached & opt.params) - step.frozen - step.maybe_frozen - model.manual - model.written
    return idle - (step.trained if trained is None else trained)


def _unseen_idle(model: ProgramModel, step: Step, opt: Optimizer) -> frozenset:
    """With no parameter the loss certainly reaches: the opaque ones of a model the engine cannot
    see that the loss may reach, when `opt` was built from that same model's parameters."""
    return frozenset(p for p in step.reached_weak & opt.params if p.opaque) - model.written


def _stepped_after_the_loop(model: ProgramModel, step: Step, opt: Optimizer, steps: list[Event]) -> list[Finding]:
    """`for x, y in data: opt.zero_grad(); loss.backward()` with `opt.step()` dedented after the
    loop: every iteration clears what the one before computed, and the single step applies the last
    backward's gradients alone. Proven when no step of `opt` runs in the backward's own iteration,
    one runs right after its loop, and the iteration clears `opt`'s gradients unconditionally (the
    loop may sit in an enclosing one: `for task in tasks: learner.observe(batches)`)."""
    bw = own_event(step)
    if not step.loops or bw is None:
        return []
    if any(step.loops[-1] in e.loops for e in steps):
        return []  # a step in the backward's own iteration
    # the step right after the loop, in the same function (not another method's training loop that
    # steps the optimizer a statistics pass only cleared)
    # (the program's events carry the whole call chain; a step's own events only the part below it)
    via = next((e.via for e in model.events if e.seq == bw.seq), bw.via)
    after = [e for e in steps if e.seq > bw.seq and e.loops == step.loops[:-1] and e.via == via]
    if not after:
        return []
    late = min(after, key=lambda e: e.seq)
    if any(
        bw.seq < e.seq < late.seq
        and e.loops == step.loops[:-1]
        and (e.kind in BACKWARDS or (e.kind == EventKind.ZERO_GRAD and e.target_key == opt.key))
        for e in model.events
    ):
        # another backward (or a clear) between the loop and the step: the step applies that one's
        # gradients, the loop's are used otherwise (an attack's, read from the input's .grad)
        return []
    # what the loss reaches of `opt`'s parameters and nothing else changes (`opt`'s own step after
    # the loop counts as training them in `step.trained`: it is the step in question)
    others = frozenset(p for o in step.optimizers if o.key != opt.key and o.key in step.stepped for p in o.params)
    idle = frozenset(p for p in _idle(model, step, opt, others) if p.kind == "param" or p.opaque)
    unseen = False
    if not idle and not step.reached:
        idle, unseen = _unseen_idle(model, step, opt), True  # as for an optimizer never stepped, above
    cleared = [
        e
        for e in step.events
        if e.kind == EventKind.ZERO_GRAD and not e.guarded and (e.target_key == opt.key or e.params & idle)
    ]
    if not idle or not cleared:
        return []
    msg = (
        f"`{step.loss}.backward()` computes gradients for {describe(idle)} in every iteration, but "
        f"{name_of(opt)} steps only after the loop: each iteration's zero_grad() "
        f"drops what the one before computed, so the single step applies the last backward's gradients "
        f"alone and the loop trains nothing else"
        + (" (the loss reaches them through code the engine could not follow)" if unseen else "")
    )
    return [
        RULE.finding(
            step.span,
            msg,
            confidence=SUSPICIOUS if unseen else CONFIRMED,
            params=names(idle),
            related=(
                Related(late.span, f"{name_of(opt)} steps here, outside the loop"),
                Related(cleared[0].span, "the gradients are cleared here in every iteration"),
            ),
        )
    ]


RULE = Rule(
    code="GA204",
    name="backward-without-step",
    family=LIFECYCLE,
    summary="backward() runs but that optimizer's step() is never reached",
    what="""
Flags a `backward()` whose loss reaches parameters held by an optimizer that is never stepped
anywhere in the program (directly, through `scaler.step(optimizer)`, or in a helper). An optimizer
handed to code the engine cannot see (a trainer from a library) is not flagged. Also flags a
`backward()` in a loop whose iteration clears the optimizer's gradients but whose `step()` sits
only after the loop (dedented one level too far): the loop computes gradients that the next
iteration throws away.
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
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(2)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x, y = torch.randn(64, 6), torch.randint(0, 3, (64,))
for epoch in range(5):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()  # <- GA204
opt.step()
""",
            runtime="lost-grads",
            note="the step() is dedented after the loop",
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
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
batches = [(torch.randn(16, 6), torch.randint(0, 3, (16,))) for _ in range(4)]
for epoch in range(3):
    opt.zero_grad()
    for x, y in batches:
        loss = nn.functional.cross_entropy(net(x), y) / len(batches)
        loss.backward()
    opt.step()
opt.zero_grad()
for x, y in batches:
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
opt.step()
""",
            runtime="trains",
            note="full-batch gradients summed over the loop, then one step; cleared before the loop, not in it",
        ),
    ),
)

"""GA209 loss-not-backpropagated."""

import ast
import re

from ..model.findings import UNSAFE, Finding, Fix, Related
from ..model.model import EventKind, LossTerm, Param, Span, Step
from .base import LIFECYCLE, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names
from .lifecycle import loop_of

_BACKWARD = re.compile(r"(.+)\.backward\(\s*\)")
_BOUND = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")


def _fix(ctx: RuleContext, term: LossTerm, step: Step) -> Fix | None:
    """`(loss + dropped).backward()` where the dropped term is a name bound before the backward."""
    m = _BOUND.match(ctx.line(term.span.path, term.span.line))
    call = ctx.text(step.span)
    b = _BACKWARD.fullmatch(call) if call else None
    if m is None or b is None or step.span.path != term.span.path or term.function != step.function:
        return None
    if (step.span.line, step.span.col) <= (term.span.end_line, term.span.end_col):
        return None
    receiver, name = b.group(1), m.group(1)
    if receiver == name:
        return None
    total = f"{receiver} + {name}" if re.fullmatch(r"[\w.]+", receiver) else f"({receiver}) + {name}"
    return Fix(
        f"Backpropagate `{name}` too: `({total}).backward()`",
        UNSAFE,
        (ctx.replace(step.span, f"({total}).backward()"),),
    )


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    reached: set[Param] = set()
    for s in model.steps:
        reached |= s.reached | s.reached_weak | s.co_reached
    out: list[Finding] = []
    for term in model.losses:
        if term.backpropagated:
            continue
        # a loss of a training iteration: one that also runs a backward()
        steps = [s for s in model.steps if s.iteration == term.iteration]
        if not steps:
            # one finding per step: the losses a helper computes on each of its branches are one loss there
            out.extend(f for f in _without_backward(ctx, term, reached) if all(f.span != o.span for o in out))
            continue
        step = steps[-1]
        held: set[Param] = set()
        for o in step.optimizers:
            held |= o.params
        held |= model.manual | model.written
        idle = {p for p in term.params - reached if p in held and not p.opaque} - step.frozen - step.maybe_frozen
        if not idle:
            continue
        opts = [o for o in step.optimizers if o.params & idle]
        who = f"`{opts[0].name}`" if opts and not opts[0].name.startswith("<") else "the optimizer"
        msg = (
            f"{term.label} is computed from {describe(idle)} but never reaches a backward(): no "
            f"backpropagated loss reaches them, so {who} never changes them"
        )
        related = [Related(step.span, f"`{step.loss}.backward()` backpropagates only `{step.loss}`")]
        if opts:
            related.append(Related(opts[0].span, f"`{opts[0].name}` ({opts[0].type}) holds them"))
        out.append(RULE.finding(term.span, msg, params=names(idle), related=tuple(related), fix=_fix(ctx, term, step)))
    return out


def _backward_named(ctx: RuleContext, span: Span) -> bool:
    """The loop around `span` calls something named like a backward (`accelerator.backward(loss)`,
    `self.manual_backward(loss)`, `engine.backward(loss)`): the loss may be backpropagated there."""
    loop = loop_of(ctx, span)
    if loop is None:
        return True  # no loop in view: not this check's case
    for node in ast.walk(loop):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if "backward" in name or name == "grad":
                return True
    return False


def _without_backward(ctx: RuleContext, term: LossTerm, reached: set[Param]) -> list[Finding]:
    """A loop that steps an optimizer over the parameters of a loss it computes and backpropagates
    nothing in that iteration: every step applies no gradient (`loss.backward()` forgotten)."""
    model = ctx.model
    stepped = [e for e in model.events if e.kind == EventKind.STEP and e.loops and e.loops[-1] == term.iteration]
    # the loop that steps is the training loop, wherever the loss was computed (a criterion's
    # forward in another module: its own lines hold no loop)
    if not stepped or any(term.iteration in u.loops for u in model.unseen) or _backward_named(ctx, stepped[0].span):
        return []  # code it could not read ran in that iteration, or something there may backpropagate
    opts = [o for o in model.optimizers if any(e.target_key == o.key for e in stepped)]
    idle = {p for o in opts for p in o.params & term.params if not p.opaque} - reached
    if not idle:
        return []
    opt = next(o for o in opts if o.params & idle)
    step = next(e for e in stepped if e.target_key == opt.key)
    name = f"`{opt.name}`" if not opt.name.startswith("<") else "the optimizer"
    msg = (
        f"{term.label} is computed from {describe(idle)} and {name} steps in the same iteration, but no "
        f"backward() runs there: the step applies no gradient, so {name} never changes them"
    )
    loop = loop_of(ctx, step.span)
    inside = loop is not None and loop.lineno <= term.span.line <= (loop.end_lineno or loop.lineno)
    if term.span.path != step.span.path or not inside:
        # the loss is made in another module (a criterion's forward) or by a helper of the loop
        # (`deal_with_objective(...)`, one criterion call per branch): the defect is the training
        # loop's, where the backward() is missing; the loss is a related place
        related = (Related(term.span, f"{term.label} is computed here"), Related(opt.span, f"{name} holds them"))
        return [RULE.finding(step.span, msg, params=names(idle), related=related)]
    related = (Related(step.span, "the step, with no backward() before it"), Related(opt.span, f"{name} holds them"))
    return [RULE.finding(term.span, msg, params=names(idle), related=related)]


RULE = Rule(
    code="GA209",
    name="loss-not-backpropagated",
    family=LIFECYCLE,
    summary="a loss computed from trainable parameters never reaches backward()",
    what="""
Flags a loss computed in the training step (a loss function's or criterion's result, or a value
bound to a name that says it is a loss) that carries gradient from parameters an optimizer holds,
when it reaches no `backward()` or `torch.autograd.grad` and no backpropagated loss reaches those
parameters either: a task head whose loss was left out of the sum, a critic whose value loss is
only printed. Also a loop that computes its loss and steps the optimizer but calls no `backward()`
at all (nor anything named like one, such as `accelerator.backward(loss)`). Metrics and logged
losses whose parameters get gradient from the loss that is backpropagated, validation losses and
losses computed under `no_grad` are not flagged.
""",
    why="""
The optimizer steps with `grad=None` for those parameters, so they never change: the head stays at
its initialisation while the printed loss makes it look trained. In an actor-critic update the
advantage `reward - value.detach()` then keeps using an untrained critic.
""",
    example="""
gender_loss = F.cross_entropy(gender_logits, gender)
age_loss = F.l1_loss(age_pred, age)
gender_loss.backward()  # the age head never learns
optimizer.step()
""",
    use_instead="""
gender_loss = F.cross_entropy(gender_logits, gender)
age_loss = F.l1_loss(age_pred, age)
(gender_loss + age_loss).backward()
optimizer.step()
""",
    severity="high",
    premises=("step", "writes"),
    lookalike=(
        "The dropped loss is the only source of gradient for parameters an optimizer holds; logged losses"
        " whose parameters also get gradient from the backpropagated loss are valid."
    ),
    runtime=RuntimeCheck("into", "`into` fails for the parameters that only the dropped loss reaches"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(12, 16), nn.ReLU())
        self.kind = nn.Linear(16, 3)
        self.size = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.kind(h), self.size(h).squeeze(1)


torch.manual_seed(0)
model = TwoHeads()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    x, kind, size = torch.randn(8, 12), torch.randint(0, 3, (8,)), torch.rand(8)
    kind_logits, size_pred = model(x)
    kind_loss = F.cross_entropy(kind_logits, kind)
    size_loss = F.mse_loss(size_pred, size)  # <- GA209
    optimizer.zero_grad()
    kind_loss.backward()
    optimizer.step()
    print(step, kind_loss.item(), size_loss.item())
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(12, 16), nn.ReLU())
        self.kind = nn.Linear(16, 3)
        self.size = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.kind(h), self.size(h).squeeze(1)


torch.manual_seed(0)
model = TwoHeads()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    x, kind, size = torch.randn(8, 12), torch.randint(0, 3, (8,)), torch.rand(8)
    kind_logits, size_pred = model(x)
    kind_loss = F.cross_entropy(kind_logits, kind)
    size_loss = F.mse_loss(size_pred, size)
    optimizer.zero_grad()
    (kind_loss + size_loss).backward()
    optimizer.step()
    print(step, kind_loss.item(), size_loss.item())
""",
            runtime="no-update: model.size",
        ),
        Example(
            """import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(1)
actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-2)
for episode in range(3):
    state = torch.randn(6, 4)
    dist = Categorical(logits=actor(state))
    action = dist.sample()
    reward = torch.randn(6)
    value = critic(state).squeeze(1)
    advantage = reward - value.detach()
    policy_loss = -(dist.log_prob(action) * advantage).mean()
    value_loss = (reward - value).pow(2).mean()  # <- GA209
    optimizer.zero_grad()
    policy_loss.backward()
    optimizer.step()
    print(episode, policy_loss.item(), value_loss.item())
""",
            fixed="""import torch
import torch.nn as nn
from torch.distributions import Categorical

torch.manual_seed(1)
actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-2)
for episode in range(3):
    state = torch.randn(6, 4)
    dist = Categorical(logits=actor(state))
    action = dist.sample()
    reward = torch.randn(6)
    value = critic(state).squeeze(1)
    advantage = reward - value.detach()
    policy_loss = -(dist.log_prob(action) * advantage).mean()
    value_loss = (reward - value).pow(2).mean()
    optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    optimizer.step()
    print(episode, policy_loss.item(), value_loss.item())
""",
            runtime="no-update: critic",
            note="the advantage's detach is the idiom; the dropped value loss is the defect",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x_val, y_val = torch.randn(20, 6), torch.randn(20, 1)
for epoch in range(3):
    x, y = torch.randn(32, 6), torch.randn(32, 1)
    pred = model(x)
    mse_loss = F.mse_loss(pred, y)
    mae_loss = F.l1_loss(pred, y)
    optimizer.zero_grad()
    mse_loss.backward()
    optimizer.step()
    with torch.no_grad():
        val_loss = F.mse_loss(model(x_val), y_val)
    print(epoch, mse_loss.item(), mae_loss.item(), val_loss.item())
""",
            runtime="trains",
            note="a metric on the same parameters and a validation loss",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(3)
actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-2)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-2)
for episode in range(3):
    state, next_state, reward = torch.randn(6, 4), torch.randn(6, 4), torch.randn(6)
    dist = Categorical(logits=actor(state))
    action = dist.sample()
    value = critic(state).squeeze(1)
    with torch.no_grad():
        target = reward + 0.9 * critic(next_state).squeeze(1)
    advantage = target - value.detach()
    actor_loss = -(dist.log_prob(action) * advantage).mean()
    critic_loss = F.mse_loss(value, target)
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
""",
            runtime="trains",
            note="each loss has its own backward; bootstrap under no_grad and a detached advantage",
        ),
    ),
)

"""GA302 retain-graph-masking."""

from ..model.findings import CONFIRMED, SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import EventKind, Span, Step
from . import ga304_multi_loss_interaction as ga304
from .base import BACKWARD, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import first_by_span


def _fix(ctx: RuleContext, span: Span) -> Fix | None:
    """Drop `retain_graph=True` (with its comma)."""
    line = ctx.line(span.path, span.line)
    start = line.rfind("retain_graph", 0, span.col)
    if start < 0 or span.line != span.end_line:
        return None
    before = line[:start].rstrip()
    cut_from = len(before) - 1 if before.endswith(",") else start
    return Fix(
        "Remove `retain_graph=True` (and detach the carried state)",
        UNSAFE,
        (ctx.replace(Span(span.path, span.line, cut_from, span.line, span.end_col), ""),),
    )


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    by_seq = {s.seq: s for s in model.steps}
    seqs: dict[int, Step] = {}
    for s in model.steps:
        for e in s.events:
            if e.span == s.span and e.kind in (EventKind.BACKWARD, EventKind.GRAD):
                seqs[e.seq] = s
    out = []
    # the later backward()s that GA304 already reports (another optimizer's loss through the shared
    # graph, a GAN's D and G steps): the same defect, named by the more specific rule
    crossed: set[Span] | None = None
    for step in model.steps:
        for st in step.stale:
            # a graph kept for a second loss of the same iteration is what retain_graph is for, unless a
            # step() in between changed a tensor it saved
            if st.kind != "retained" or not (st.earlier_iteration or st.modified or st.before_loop):
                continue
            if st.before_loop and not st.earlier_iteration and not st.modified and not st.by_stepped:
                # one forward backpropagated once per class, row or sample with no step between (a
                # Fisher estimate, a Jacobian): what retain_graph is for
                continue
            keeper = seqs.get(st.by) or by_seq.get(st.by)
            span = keeper.retain_span if keeper is not None and keeper.retain_span else st.by_span
            fix = _fix(ctx, span) if keeper is not None and keeper.retain_span else None
            if st.before_loop and not st.earlier_iteration:
                if st.modified:
                    msg = (
                        "`retain_graph=True` keeps a graph built before this loop alive, and every iteration's loss "
                        "backpropagates through it again; a step() has since changed parameters it saved, so "
                        'backward() raises "one of the variables needed for gradient computation has been modified '
                        'by an inplace operation" (detach it where it is made, or build it in the iteration)'
                    )
                    level = CONFIRMED
                else:
                    msg = (
                        "`retain_graph=True` keeps a graph built before this loop alive, and every iteration's loss "
                        "backpropagates through it again: gradient flows into that stale history at each iteration "
                        "(an old policy's log-probabilities, features computed once); detach it where it is made"
                    )
                    level = SUSPICIOUS
            elif not st.earlier_iteration:
                if crossed is None:
                    crossed = {r.span for f in ga304.check(ctx) for r in f.related}
                if step.span in crossed:
                    continue
                msg = (
                    "`retain_graph=True` keeps this graph for a later backward() of the same iteration, but a "
                    'step() in between changes parameters it saved, so that backward() raises "one of the '
                    'variables needed for gradient computation has been modified by an inplace operation" '
                    "(run the later loss's backward() before the step, or recompute what it reuses)"
                )
                level = CONFIRMED
                fix = None  # dropping retain_graph would only change the error
            elif st.modified:
                msg = (
                    "`retain_graph=True` keeps the previous iteration's graph alive, and this iteration's loss "
                    "reaches back into it; a step() has since changed parameters that graph saved, so backward() "
                    'raises "one of the variables needed for gradient computation has been modified by an '
                    'inplace operation"'
                )
                level = CONFIRMED
            else:
                msg = (
                    "`retain_graph=True` keeps every previous iteration's graph alive through state carried into "
                    "the next loss: memory and backward time grow each iteration, and gradient flows into stale "
                    "history (detach the carried state instead)"
                )
                level = SUSPICIOUS
            rel: tuple[Related, ...] = (Related(step.span, f"`{step.loss}.backward()` reaches the retained graph"),)
            if st.carry is not None:
                rel += (Related(st.carry, "the state that carries it"),)
            out.append(
                RULE.finding(
                    span,
                    msg,
                    confidence=level,
                    related=rel,
                    fix=fix,
                )
            )
    return first_by_span(out)


RULE = Rule(
    code="GA302",
    name="retain-graph-masking",
    family=BACKWARD,
    summary="retain_graph=True keeping a graph reached again after a step() or in the next iteration",
    what="""
Flags `backward(retain_graph=True)` whose retained graph is reached again in a later iteration,
through state carried across iterations without `.detach()` (the usual way to silence GA301).
Confirmed when a parameter that graph saved was changed in place by a `step()` since (torch then
raises), suspicious when it only grows. Retaining a graph for a second loss in the same iteration
is not flagged, unless a `step()` runs between the two backward() calls and changes a parameter the
graph saved: torch raises there too. A graph built before the loop and reached by every
iteration's `backward(retain_graph=True)` (PPO's old log-probabilities kept with their graph,
features computed once) is flagged the same way: suspicious, confirmed when a step changed a
parameter it saved.
""",
    why="""
The carried state drags every earlier iteration's graph along: memory and backward time grow
linearly, gradient flows into history computed with old parameters, and once `step()` has changed
a saved parameter in place, backward raises "modified by an inplace operation".
""",
    example="""
out, hidden = gru(x, hidden)
loss = criterion(readout(out), y)
loss.backward(retain_graph=True)
optimizer.step()
""",
    use_instead="""
hidden = hidden.detach()
out, hidden = gru(x, hidden)
loss = criterion(readout(out), y)
loss.backward()
optimizer.step()
""",
    severity="medium",
    lookalike="`retain_graph=True` keeps a graph no later backward() of the iteration needs.",
    runtime=RuntimeCheck(
        None,
        (
            "no runtime check: `retain_graph=True` makes the step run; the graphs it keeps cost memory, "
            "which the probe does not measure"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
gru = nn.GRU(input_size=3, hidden_size=8, batch_first=True)
readout = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*gru.parameters(), *readout.parameters()], lr=0.01)
signal = torch.randn(2, 30, 3)
hidden = torch.zeros(1, 2, 8)
for start in range(0, 30, 10):
    optimizer.zero_grad()
    out, hidden = gru(signal[:, start:start + 10], hidden)
    loss = readout(out).pow(2).mean()
    loss.backward(retain_graph=True)  # <- GA302
    optimizer.step()
""",
            runtime="error: modified by an inplace operation",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8))
head, critic = nn.Linear(8, 4), nn.Linear(4, 1)
opt_main = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-3)
opt_critic = torch.optim.Adam(critic.parameters(), lr=1e-3)
for it in range(3):
    x = torch.randn(16, 4)
    code = encoder(x)
    opt_main.zero_grad()
    opt_critic.zero_grad()
    recon = head(code)
    ((recon - x).pow(2).mean() + critic(recon).mean()).backward(retain_graph=True)  # <- GA302
    opt_main.step()
    opt_critic.step()
    opt_critic.zero_grad()
    critic(head(code)).mean().backward()
    opt_critic.step()
""",
            runtime="error: modified by an inplace operation",
            note="the step between the two backward() calls changed the encoder weights the kept graph saved",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.torso = nn.Sequential(nn.Linear(8, 32), nn.Tanh())
        self.pi, self.v = nn.Linear(32, 4), nn.Linear(32, 1)

    def forward(self, s):
        h = self.torso(s)
        return self.pi(h), self.v(h).squeeze(-1)


torch.manual_seed(1)
agent = ActorCritic()
optimizer = torch.optim.RMSprop(agent.parameters(), lr=7e-4)
for rollout in range(3):
    states, returns = torch.randn(16, 8), torch.randn(16)
    logits, values = agent(states)
    dist = Categorical(logits=logits)
    advantage = (returns - values).detach()
    value_loss = 0.5 * (returns - values).pow(2).mean()
    policy_loss = -(dist.log_prob(dist.sample()) * advantage).mean()
    optimizer.zero_grad()
    value_loss.backward(retain_graph=True)
    policy_loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="the graph is retained for the second loss of the same iteration",
        ),
    ),
)

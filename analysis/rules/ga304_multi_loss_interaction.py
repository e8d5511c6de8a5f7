"""GA304 multi-loss-interaction."""

from collections.abc import Set

from ..model.findings import UNSAFE, Finding, Fix, Related
from ..model.model import Crossing, Event, EventKind, Optimizer, Param, ProgramModel, Stale, Step
from .base import BACKWARD, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names
from .lifecycle import (
    call_of,
    clears,
    first_by_span,
    name_of,
    optimizers,
    own_event,
    steps_of,
)


def _fix(ctx: RuleContext, crossing: Crossing | None) -> Fix | None:
    if crossing is None or crossing.arg is None:
        return None
    text = ctx.text(crossing.arg)
    if not text or "\n" in text:
        return None
    wrapped = f"{text}.detach()" if text.replace("_", "").replace(".", "").isalnum() else f"({text}).detach()"
    return Fix(f"Detach the other model's output here: `{wrapped}`", UNSAFE, (ctx.replace(crossing.arg, wrapped),))


def _cut_off_by(model: ProgramModel, key: int, step: Step, mine: set) -> bool:
    """The other optimizer's own loss cuts this model off (`D(fake.detach())` in the discriminator's
    loss): the two objectives are adversaries, not one shared objective (BicycleGAN's encoder and
    generator, each stepped on losses through the other)."""
    return any(_cuts_off(s, mine) for s in model.steps if s is not step and key in s.stepped)


def _cuts_off(step: Step, params: Set[Param]) -> bool:
    """`step`'s loss cuts some of `params` off (a `.detach()`, `.data` or `no_grad` on their output)."""
    return any(cut.kind in ("detach", "data", "nograd") and cut.removed & params for cut in step.cuts)


def check(ctx: RuleContext) -> list[Finding]:
    # computed once per model: GA302 reads it too (a later backward() GA304 names is not GA302's)
    found: list[Finding] | None = ctx.cache.get("GA304")
    if found is None:
        found = ctx.cache["GA304"] = _findings(ctx)
    return list(found)


def _scored(
    crossings: list[Crossing], step: Step, before: int, theirs: Set[Param], mine: Set[Param]
) -> Crossing | None:
    """The first crossing of `step`'s iteration, before its backward, where the other model (`theirs`)
    scored this one's output (`mine`): D(G(z)) in G's loss."""
    return next(
        (
            c
            for c in crossings
            if c.loops == step.loops and c.seq < before and c.own & theirs and c.foreign & mine and c.span
        ),
        None,
    )


def _carried_to_the_next(step: Step, bw: Event, other: Optimizer, theirs: Set[Param]) -> Event | None:
    """The other optimizer's step that comes before this backward() in the iteration, runs in every
    iteration, and meets what this backward() wrote in the next one: nothing between this backward()
    and the end of the iteration, nor between the iteration's start and that step, clears it."""
    if not step.loops:
        return None
    for other_step in steps_of(step.events, other.key):
        if (
            other_step.seq > bw.seq
            or other_step.guarded
            or bw.guarded
            or other_step.exclusive(bw)
            or other_step.loops[: len(step.loops)] != step.loops
        ):
            continue
        around = [e for e in step.events if e.seq > bw.seq or e.seq < other_step.seq]
        if not any(clears(e, theirs, other) for e in around):
            return other_step
    return None


def _findings(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    opts = optimizers(model)
    later_stale: dict[int, list[tuple[Step, Stale]]] = {}
    for s in model.steps:
        for st in s.stale:
            if st.kind == "freed" or st.modified:
                later_stale.setdefault(st.by, []).append((s, st))
    crossings = sorted(model.crossings, key=lambda c: c.seq)
    out = []
    for step in model.steps:
        if step.kind != EventKind.BACKWARD or not step.stepped:
            continue
        bw = own_event(step)
        if bw is None:
            continue
        mine: set[Param] = set()
        for key in step.stepped:
            if key in opts:
                mine |= opts[key].params
        for other in step.optimizers:
            if other.key in step.stepped or other.escaped:
                continue
            theirs = (step.reached & other.params) - mine - step.frozen - step.maybe_frozen
            if not theirs:
                continue
            # (a) the other optimizer's loss backpropagates through the graph this backward freed
            reuse = [(s, st) for s, st in later_stale.get(bw.seq, []) if other.key in s.stepped]
            # (b) the other optimizer steps later in the iteration without clearing what this wrote
            dirty = []
            for other_step in steps_of(step.events, other.key):
                if other_step.seq < bw.seq or other_step.exclusive(bw):
                    continue
                between = [e for e in step.events if bw.seq < e.seq < other_step.seq]
                if not any(clears(e, theirs, other) for e in between):
                    dirty.append(other_step)
            # ... or earlier in the iteration, which the next iteration runs again: what this backward
            # wrote is still there when it steps (D stepped and cleared first, then G's loss through D)
            carried = not dirty and _carried_to_the_next(step, bw, other, theirs)
            if carried:
                dirty = [carried]
            # (c) this backward runs into the graph of the other model that the other optimizer's own
            # backward already freed (the generator stepped first, then `D(fake)` without a detach)
            freed = [
                st
                for st in step.stale
                if (st.kind == "freed" or st.modified)
                and not st.earlier_iteration
                and not st.before_loop
                and other.key in st.by_stepped
                and not set(st.by_stepped) & set(step.stepped)
            ]
            # (d) the other optimizer's step() changed, between this loss's forward and its backward,
            # parameters its graph saved (D scored G's output, then D stepped, then G's backward)
            steps = {e.span for e in steps_of(step.events, other.key)}
            changed = [c for c in step.stepped_saves if c.param in theirs and c.span in steps]
            if changed and not reuse and not dirty and not freed:
                # the other model scored this one's output (D(G(z)) in G's loss): not a shared encoder
                scored = _scored(crossings, step, bw.seq, theirs, mine)
                if scored is not None and scored.span is not None:
                    # the anchor is the catalog's: the use of the other's model in this loss
                    out.append(
                        RULE.finding(
                            scored.span,
                            f"{describe(theirs)}, which {name_of(other)} trains, reach `{step.loss}` through a graph "
                            f"built before {call_of(other, 'step')} changed them in place: `{step.loss}.backward()` "
                            'raises "one of the variables needed for gradient computation has been modified by an '
                            'inplace operation"; step after both backward() calls, or compute this loss after the step',
                            params=names(theirs),
                            related=(
                                Related(changed[0].span, f"{call_of(other, 'step')} changes them here"),
                                Related(step.span, f"`{step.loss}.backward()`"),
                            ),
                        )
                    )
                continue
            if not reuse and not dirty and not freed:
                continue
            # the adversarial structure: a model this loss's optimizer trains, applied to the other's output
            # (for (c), the application in this loss: after the backward that freed the other's graph)
            after = freed[0].by if freed and not reuse and not dirty else -1
            crossing = next(
                (
                    c
                    for c in crossings
                    if c.loops == step.loops
                    and after < c.seq < bw.seq
                    and c.own & mine
                    and c.foreign & theirs
                    and c.span is not None
                ),
                None,
            )
            if (
                crossing is None
                and dirty
                and not reuse
                and not freed
                and any(clears(e, theirs, other) for e in step.events)
                and _cut_off_by(model, other.key, step, mine)
            ):
                # the other model scored this one's output (D(G(z)) in G's loss): this backward writes
                # into its gradients by design, and its step must not find them there (cleared
                # nowhere in the iteration, GA201 says so)
                scored = _scored(crossings, step, bw.seq, theirs, mine)
                if scored is not None and scored.span is not None:
                    when = (
                        f"after {name_of(other)} cleared them, and {call_of(other, 'step')} in the next iteration "
                        "applies them with its own loss's since nothing clears them again before it"
                        if carried
                        else f"and {call_of(other, 'step')} applies them with its own loss's since nothing clears "
                        "them in between"
                    )
                    out.append(
                        RULE.finding(
                            scored.span,
                            f"{describe(theirs)}, which {name_of(other)} trains, score this model's output in "
                            f"`{step.loss}`: its backward() writes into their gradients {when} (that model is "
                            f"pushed towards this loss's objective too); clear {name_of(other)}'s gradients after "
                            f"this backward() or before its own",
                            params=names(theirs),
                            related=(
                                Related(dirty[0].span, f"{call_of(other, 'step')} applies the mixed gradients"),
                                Related(step.span, f"`{step.loss}.backward()`"),
                            ),
                        )
                    )
                continue
            if crossing is None:
                continue  # both losses are the other model's objective too (a shared encoder, BicycleGAN)
            anchor = crossing.span
            if anchor is None:
                continue  # (the search above takes crossings with a span)
            if not reuse and not dirty:
                st = freed[0]
                raised = (
                    ('"one of the variables needed for gradient computation has been modified by an inplace operation"')
                    if st.kind == "retained"
                    else '"Trying to backward through the graph a second time"'
                )
                msg = (
                    f"{describe(theirs)}, which {name_of(other)} trains, reach `{step.loss}` without a `.detach()`: "
                    f"their graph was freed by the earlier backward() of {name_of(other)}'s loss, so this "
                    f"backward() raises {raised}"
                )
                rel: tuple[Related, ...] = (Related(st.by_span, "this backward() freed that graph"),)
            elif reuse:
                later, st = reuse[0]
                raised = (
                    (
                        '"one of the variables needed for gradient computation has been modified by an inplace '
                        'operation" (the step changed what that graph saved)'
                    )
                    if st.kind == "retained"
                    else '"Trying to backward through the graph a second time"'
                )
                msg = (
                    f"{describe(theirs)}, which {name_of(other)} trains, reach `{step.loss}` without a `.detach()`: "
                    f"the loss of {name_of(other)} then backpropagates through that graph again and raises {raised}"
                )
                rel = (Related(later.span, f"`{later.loss}.backward()` goes through the shared graph"),)
            elif carried:
                msg = (
                    f"{describe(theirs)}, which {name_of(other)} trains, reach `{step.loss}` without a `.detach()`: "
                    f"its backward() writes into their gradients after {name_of(other)} cleared them, and nothing "
                    f"clears them again before {call_of(other, 'step')} in the next iteration, which applies them "
                    f"with its own loss's (that model is pushed towards this loss's objective too); clear its "
                    f"gradients before its backward() rather than after its step()"
                )
                rel = (Related(dirty[0].span, f"{call_of(other, 'step')} applies them"),) if dirty else ()
            else:
                msg = (
                    f"{describe(theirs)}, which {name_of(other)} trains, reach `{step.loss}` without a `.detach()`: "
                    f"its backward() writes into their gradients, and {call_of(other, 'step')} applies them with its "
                    f"own since nothing clears them in between"
                )
                rel = (Related(dirty[0].span, f"{call_of(other, 'step')} applies the mixed gradients"),)
            out.append(
                RULE.finding(
                    anchor,
                    msg,
                    params=names(theirs),
                    related=rel + (Related(step.span, f"`{step.loss}.backward()`"),),
                    fix=_fix(ctx, crossing),
                )
            )
    out += _one_optimizer(model, opts, crossings)
    out += _critic_in_the_weight(model)
    return first_by_span(out)


def _critic_in_the_weight(model: ProgramModel) -> list[Finding]:
    """`-log_prob * (ret - value)` without `.detach()` on the advantage: the policy-gradient term
    writes into the critic's gradients, and the step that applies the policy's applies them too,
    beside the critic's own value loss (which is what makes them a critic: a mixture's gate weighting
    log-likelihoods has none). The critic is pushed to change its values so as to raise the weight of
    likely actions, not to predict returns."""
    out = []
    steps = {s.seq: s for s in model.steps if s.kind == EventKind.BACKWARD}
    for sw in model.scores:
        for seq in sw.backwards:
            step = steps.get(seq)
            if step is None:
                continue
            critic = sw.params & step.trained & model.regressed
            critic -= step.frozen | step.maybe_frozen
            if step.inputs:
                critic &= step.inputs
            if not critic:
                continue
            out.append(
                RULE.finding(
                    sw.span,
                    f"this weight of a log-probability carries gradient from {describe(critic)}, and `{step.loss}`'s "
                    f"step trains them: the policy-gradient term writes into the critic's gradients beside its own "
                    f"value loss, pushing its values to raise the weight of likely actions instead of predicting "
                    f"returns; detach the advantage in the policy term (`advantage.detach()`)",
                    params=names(critic),
                    related=(Related(step.span, f"`{step.loss}.backward()`"),),
                )
            )
            break
    return out


def _one_optimizer(model: ProgramModel, opts: dict, crossings: list[Crossing]) -> list[Finding]:
    """An actor and its critic (or a generator and its discriminator) whose losses are both
    backpropagated before the steps: one optimizer over both, or one each with both steps after
    both backward() calls (`actor_opt.zero_grad(); critic_opt.zero_grad(); pi_loss.backward();
    q_loss.backward(); actor_opt.step(); critic_opt.step()`, DDPG). The actor's loss scores the
    actor's output with the critic (`-Q(s, pi(s))`), so its backward writes into the critic's
    gradients and the critic's step applies them with the critic's own loss's. Reported where the
    critic's own loss reaches the critic and not the actor, and either cuts the actor off (a TD
    target under no_grad, `D(fake.detach())`) or regresses the critic onto a target (a value loss on
    replayed actions, its target from target networks): adversaries, not one objective."""
    out = []
    for step in model.steps:
        if step.kind != EventKind.BACKWARD or not step.stepped:
            continue
        bw = own_event(step)
        if bw is None:
            continue
        reached = step.reached - step.frozen - step.maybe_frozen
        if step.inputs:
            reached &= step.inputs  # `backward(inputs=...)`: only those get this loss's gradient
        stepped = [opts[k] for k in step.stepped if k in opts and not opts[k].escaped]
        applied: set[Param] = set()
        for o in stepped:
            applied |= o.params
        for opt in stepped:
            found = _scorer_trained(model, step, bw, opt, reached & opt.params, reached & applied, crossings)
            if found is not None:
                out.append(found)
                break
    return out


def _scorer_trained(
    model: ProgramModel,
    step: Step,
    bw: Event,
    opt: Optimizer,
    trained: Set[Param],
    applied: Set[Param],
    crossings: list[Crossing],
) -> Finding | None:
    """The finding of `_one_optimizer` for `opt`, one of the optimizers stepping after `step`'s
    backward: `trained`, what it steps of what the loss reaches; `applied`, what any of them steps."""
    later = [e for e in steps_of(step.events, opt.key) if e.seq > bw.seq and not e.exclusive(bw)]
    if not trained or not later:
        return None
    single = len(step.stepped) == 1
    for c in crossings:
        critic, actor = c.own & trained, c.foreign & applied
        if c.loops != step.loops or c.seq > bw.seq or c.span is None or not critic or not actor:
            continue
        own_loss = next(
            (
                s
                for s in model.steps
                if s is not step
                and opt.key in s.stepped
                and s.loops == step.loops
                and s.reached & critic
                and not s.reached & actor
                and (_cuts_off(s, actor) or bool(s.reached & critic & model.regressed))
                and (single or _same_update(step, s, bw, later[0], critic, opt))
            ),
            None,
        )
        if own_loss is None:
            continue
        between = [e for e in step.events if bw.seq < e.seq < later[0].seq]
        if any(clears(e, critic, opt) for e in between):
            continue
        both = actor <= opt.params
        trains = (
            f"{name_of(opt)} trains both"
            if both
            else f"{name_of(opt)}, which trains the scorer, steps after it with nothing clearing them"
        )
        return RULE.finding(
            c.span,
            f"{describe(critic)} score the output of {describe(actor)} in `{step.loss}`, and "
            f"{trains}: this backward() writes into the scorer's gradients, and "
            f"{call_of(opt, 'step')} applies them with those of its own loss (`{own_loss.loss}`), which "
            f"does not reach the other model; the scorer is pushed to raise the score it gives. Leave it "
            f"out of this backward (`{step.loss}.backward(inputs=...)` with the other model's parameters, "
            f"or `requires_grad_(False)` on it around this loss), "
            + ("or give each its own optimizer" if both else f"or clear {name_of(opt)}'s gradients after it"),
            params=names(critic),
            related=(
                Related(later[0].span, f"{call_of(opt, 'step')} applies the mixed gradients"),
                Related(step.span, f"`{step.loss}.backward()`"),
                Related(own_loss.span, f"`{own_loss.loss}.backward()`, the scorer's own loss"),
            ),
        )
    return None


def _same_update(step: Step, own: Step, bw: Event, later: Event, critic: Set[Param], opt: Optimizer) -> bool:
    """With several optimizers stepping after this backward: the critic's own loss is applied by the
    same step() (its backward between this one and that step, or before this one with nothing
    clearing the critic in between), not by another update of its own (a second critic update on a
    detached sample, after the first step)."""
    mine = own_event(own)
    if mine is None:
        return False
    if bw.seq < mine.seq < later.seq:
        return True
    between = [e for e in step.events if mine.seq < e.seq < bw.seq]
    return (
        mine.seq < bw.seq
        and not any(clears(e, critic, opt) for e in between)
        and not any(mine.seq < e.seq < bw.seq for e in steps_of(step.events, opt.key))
    )


RULE = Rule(
    code="GA304",
    name="multi-loss-interaction",
    family=BACKWARD,
    summary="one optimizer's loss writes into the gradients another optimizer steps",
    what="""
Flags the place where one model's output enters another optimizer's loss without `.detach()`
(a GAN's `D(fake)` in the discriminator loss), when that backward's gradients for the first
model are then applied by its optimizer without being cleared, when the first model's loss
later backpropagates through the graph that backward freed, or when that loss itself runs into
the first model's graph that the first model's own backward already freed (the generator stepped
first, then `D(fake)` in the discriminator loss). It also flags the other optimizer's `step()`
when it runs between a loss's forward through the other model and that loss's backward (G's loss
scored by D, then D's step, then G's backward): the step changed in place the weights that graph
saved. The other direction too: the generator's loss scores its output with the discriminator
(`D(G(z))`, also when a wrapper's forward applies a discriminator it holds), so its backward
writes into the discriminator's gradients, and the discriminator's optimizer, whose own loss
detaches the generator, steps on them with its own because nothing clears them in between (the
generator stepped first, the discriminator cleared only after its step); that is no shared
objective. The same when the discriminator steps first and clears after its step: the generator's
backward then refills its gradients, and its step in the next iteration applies them. And with
one optimizer over both (an actor and its critic, `q_loss.backward(); pi_loss.backward();
opt.step()`), or one each stepped after both backward() calls (DDPG's `actor_opt.zero_grad();
critic_opt.zero_grad(); pi_loss.backward(); q_loss.backward(); actor_opt.step(); critic_opt.step()`):
the actor's `-Q(s, pi(s))` trains the critic as well, where the critic's own loss does not reach
the actor and cuts it off (a TD target under `no_grad`) or regresses the critic onto a target (a
value loss on replayed actions); `pi_loss.backward(inputs=...)` or the critic frozen around the
actor's loss are not flagged. Likewise an advantage that is not
detached in a policy-gradient term (`-log_prob * (returns - values)`, the values from a critic
with a value loss of its own) trains the critic through the policy's loss when one step applies
both; a detached advantage, and a mixture's gate weighting log-probabilities (no value loss), are
not flagged. A detached `fake` in the discriminator step, and clearing the generator's gradients
before its own backward, are not flagged.
""",
    why="""
The discriminator's loss pushes the generator to make fakes easier to reject; applied by the
generator's optimizer, it fights the generator's own objective. Reusing `fake` for the generator
loss after the discriminator's backward raises "Trying to backward through the graph a second
time" (or, with `retain_graph=True`, "modified by an inplace operation" once D has stepped).
""",
    example="""
fake = G(z)
d_loss = bce(D(real), ones) + bce(D(fake), zeros)
d_loss.backward(); opt_d.step()
g_loss = bce(D(fake), ones)
g_loss.backward(); opt_g.step()
""",
    use_instead="""
fake = G(z)
d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
d_loss.backward(); opt_d.step()
g_loss = bce(D(fake), ones)
g_loss.backward(); opt_g.step()
""",
    severity="medium",
    lookalike=(
        "One optimizer's loss writes into gradients another optimizer then applies, with no detach or "
        "clearing in between; a GAN's `fake.detach()` in the discriminator step is the valid form."
    ),
    runtime=RuntimeCheck(
        "cleared", "`cleared` fails: one optimizer applies gradients another loss left in its parameters"
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
for it in range(2):
    real, z = torch.randn(8, 2) + 2, torch.randn(8, 4)
    fake = G(z)
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake), torch.zeros(8, 1))  # <- GA304
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(8, 1))
    g_loss.backward()
    opt_g.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
for it in range(2):
    real, z = torch.randn(8, 2) + 2, torch.randn(8, 4)
    fake = G(z)
    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(8, 1))
    g_loss.backward()
    opt_g.step()
""",
            runtime="error: backward through the graph a second time",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
gen = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 6), nn.Tanh())
disc = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
for it in range(2):
    opt_g.zero_grad()
    opt_d.zero_grad()
    real = torch.rand(16, 6) * 2 - 1
    fake_logit = disc(gen(torch.randn(16, 8)))  # <- GA304
    d_loss = F.softplus(fake_logit).mean() + F.softplus(-disc(real)).mean()
    d_loss.backward()
    opt_d.step()
    g_loss = F.softplus(-disc(gen(torch.randn(16, 8)))).mean()
    g_loss.backward()
    opt_g.step()
""",
            runtime="trains",
            note="it trains, with the generator also pushed by the discriminator's loss",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Linear(16, 16)
D = nn.Linear(16, 1)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-4)
for step in range(3):
    x = torch.randn(8, 16)
    fake = G(x)
    g_loss = (fake - x).pow(2).mean() - D(fake).mean()  # <- GA304
    g_loss.backward()
    opt_g.step()
    opt_g.zero_grad()
    d_loss = (D(fake.detach()).exp() - D(x)).mean()
    d_loss.backward()
    opt_d.step()
    opt_d.zero_grad()
""",
            runtime="trains",
            note="the generator steps first; its loss leaves gradients in D that D's step applies with its own",
        ),
        Example(
            """import torch
import torch.nn as nn


class VQGan(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 16)
        self.discr = nn.Linear(16, 1)

    def forward(self, x, return_discr_loss=False):
        recon = self.enc(x)
        if return_discr_loss:
            return (self.discr(recon.detach()).exp() - self.discr(x)).mean()
        return (recon - x).pow(2).mean() - self.discr(recon).mean()  # <- GA304


torch.manual_seed(0)
vae = VQGan()
discr_params = set(vae.discr.parameters())
optim = torch.optim.Adam(list(set(vae.parameters()) - discr_params), lr=1e-4)
discr_optim = torch.optim.Adam(discr_params, lr=1e-4)
for step in range(3):
    x = torch.randn(8, 16)
    vae(x).backward()
    optim.step()
    optim.zero_grad()
    vae(x, return_discr_loss=True).backward()
    discr_optim.step()
    discr_optim.zero_grad()
""",
            runtime="trains",
            note="the discriminator is a submodule the autoencoder's forward applies; its optimizer holds the rest",
        ),
        Example(
            """import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())
        self.q = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def q_of(self, s, a):
        return self.q(torch.cat([s, a], -1)).squeeze(-1)  # <- GA304


torch.manual_seed(0)
agent = Agent()
opt = torch.optim.Adam(agent.parameters(), lr=1e-3)
for it in range(3):
    s, a, r, s2 = torch.randn(32, 4), torch.rand(32, 2) * 2 - 1, torch.randn(32), torch.randn(32, 4)
    with torch.no_grad():
        target = r + 0.99 * agent.q_of(s2, agent.pi(s2))
    q_loss = ((agent.q_of(s, a) - target) ** 2).mean()
    pi_loss = -agent.q_of(s, agent.pi(s)).mean()
    opt.zero_grad()
    q_loss.backward()
    pi_loss.backward()
    opt.step()
""",
            runtime="trains",
            note="one optimizer over actor and critic: the actor's loss also trains the critic to raise its score",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 32)
        self.policy = nn.Linear(32, 3)
        self.value = nn.Linear(32, 1)

    def forward(self, obs):
        h = F.relu(self.body(obs))
        return F.softmax(self.policy(h), dim=-1), self.value(h).squeeze(-1)


torch.manual_seed(0)
model = ActorCritic()
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for episode in range(3):
    obs, returns = torch.randn(16, 4), torch.randn(16)
    probs, values = model(obs)
    dist = torch.distributions.Categorical(probs)
    actions = dist.sample()
    advantage = returns - values
    policy_loss = -(dist.log_prob(actions) * advantage).mean()  # <- GA304
    value_loss = F.mse_loss(values, returns)
    opt.zero_grad()
    (policy_loss + 0.5 * value_loss).backward()
    opt.step()
""",
            runtime="trains",
            note="the advantage is not detached: the policy term also trains the value head",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
for it in range(3):
    z, real = torch.randn(16, 8), torch.randn(16, 8)
    fake = G(z)
    d_loss = torch.relu(1 - D(real)).mean() + torch.relu(1 + D(fake.detach())).mean()
    d_loss.backward()
    opt_d.step()
    opt_d.zero_grad()
    g_loss = -D(fake).mean()  # <- GA304
    g_loss.backward()
    opt_g.step()
    opt_g.zero_grad()
""",
            runtime="mixed-grads",
            note="D cleared after its step: G's backward refills D's gradients, D's next step applies them",
        ),
        Example(
            """import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.head = nn.Linear(16, 4)
        self.frac = nn.Linear(16, 4)

    def fractions(self, emb):
        probs = torch.softmax(self.frac(emb), dim=1)
        return -(probs * torch.log(probs + 1e-8)).sum(1)


torch.manual_seed(0)
net = Agent()
frac_opt = torch.optim.RMSprop(net.frac.parameters(), lr=1e-3)
main_opt = torch.optim.Adam([*net.body.parameters(), *net.head.parameters()], lr=1e-3)
for step in range(3):
    emb = net.body(torch.randn(5, 8))
    entropies = net.fractions(emb)  # <- GA304
    entropy_loss = -0.1 * entropies.mean()
    frac_opt.zero_grad()
    entropy_loss.backward(retain_graph=True)
    frac_opt.step()
    main_opt.zero_grad()
    (net.head(emb).pow(2).mean() + entropy_loss).backward()
    main_opt.step()
""",
            fixed="""import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.head = nn.Linear(16, 4)
        self.frac = nn.Linear(16, 4)

    def fractions(self, emb):
        probs = torch.softmax(self.frac(emb), dim=1)
        return -(probs * torch.log(probs + 1e-8)).sum(1)


torch.manual_seed(0)
net = Agent()
frac_opt = torch.optim.RMSprop(net.frac.parameters(), lr=1e-3)
main_opt = torch.optim.Adam([*net.body.parameters(), *net.head.parameters()], lr=1e-3)
for step in range(3):
    emb = net.body(torch.randn(5, 8))
    entropies = net.fractions(emb.detach())
    entropy_loss = -0.1 * entropies.mean()
    frac_opt.zero_grad()
    entropy_loss.backward(retain_graph=True)
    frac_opt.step()
    main_opt.zero_grad()
    (net.head(emb).pow(2).mean() + entropy_loss).backward()
    main_opt.step()
""",
            runtime="error: modified by an inplace operation",
            note="the other model is applied inside a method given the embedding as it is: the use, and the detach, "
            "are at the call (fqf-iqn-qrdqn's fraction network)",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())
        self.q = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def q_of(self, s, a):
        return self.q(torch.cat([s, a], -1)).squeeze(-1)


torch.manual_seed(0)
agent = Agent()
opt = torch.optim.Adam(agent.parameters(), lr=1e-3)
for it in range(3):
    s, a, r, s2 = torch.randn(32, 4), torch.rand(32, 2) * 2 - 1, torch.randn(32), torch.randn(32, 4)
    with torch.no_grad():
        target = r + 0.99 * agent.q_of(s2, agent.pi(s2))
    q_loss = ((agent.q_of(s, a) - target) ** 2).mean()
    pi_loss = -agent.q_of(s, agent.pi(s)).mean()
    opt.zero_grad()
    q_loss.backward()
    pi_loss.backward(inputs=list(agent.pi.parameters()))
    opt.step()
""",
            runtime="trains",
            note="the actor's loss backpropagated into the actor's parameters only",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
body = nn.Linear(4, 32)
policy, value = nn.Linear(32, 3), nn.Linear(32, 1)
opt = torch.optim.Adam([*body.parameters(), *policy.parameters(), *value.parameters()], lr=1e-3)
experts = nn.ModuleList([nn.Linear(4, 2) for _ in range(3)])
gate = nn.Linear(4, 3)
opt_mix = torch.optim.Adam([*experts.parameters(), *gate.parameters()], lr=1e-3)
for episode in range(3):
    obs, returns = torch.randn(16, 4), torch.randn(16)
    h = F.relu(body(obs))
    log_probs = F.log_softmax(policy(h), dim=-1)
    actions = torch.multinomial(log_probs.exp(), 1).squeeze(1)
    values = value(h).squeeze(-1)
    advantage = (returns - values).detach()
    policy_loss = -(log_probs.gather(1, actions[:, None]).squeeze(1) * advantage).mean()
    loss = policy_loss + 0.5 * F.mse_loss(values, returns)
    opt.zero_grad()
    loss.backward()
    opt.step()
    y = torch.randn(16, 2)
    weights = F.softmax(gate(obs), dim=-1)
    comp = torch.stack([-F.mse_loss(e(obs), y, reduction="none").sum(-1) for e in experts], -1)
    mix_loss = -(weights * F.log_softmax(comp, dim=-1)).sum(-1).mean()
    opt_mix.zero_grad()
    mix_loss.backward()
    opt_mix.step()
""",
            runtime="trains",
            note="the advantage detached; a mixture's gate weights log-probabilities and is meant to learn from them",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Linear(16, 16)
D = nn.Linear(16, 1)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-4)
for step in range(3):
    x = torch.randn(8, 16)
    fake = G(x)
    g_loss = (fake - x).pow(2).mean() - D(fake).mean()
    g_loss.backward()
    opt_g.step()
    opt_g.zero_grad()
    opt_d.zero_grad()
    d_loss = (D(fake.detach()).exp() - D(x)).mean()
    d_loss.backward()
    opt_d.step()
""",
            runtime="trains",
            note="what the generator's loss wrote into D is cleared before D's own backward",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
D = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
g_opt = torch.optim.RMSprop(G.parameters(), lr=5e-4)
d_opt = torch.optim.RMSprop(D.parameters(), lr=5e-4)
for step in range(3):
    real = torch.randn(12, 1) * 0.3 + 1.5
    d_opt.zero_grad()
    d_loss = F.softplus(D(G(torch.randn(12, 3)))).mean() + F.softplus(-D(real)).mean()
    d_loss.backward()
    d_opt.step()
    g_opt.zero_grad()
    g_loss = F.softplus(-D(G(torch.randn(12, 3)))).mean()
    g_loss.backward()
    g_opt.step()
""",
            runtime="trains",
            note="the generator's gradients are cleared before its own backward",
        ),
    ),
)

"""GA301 backward-through-freed-graph."""

import ast

from ..model.findings import CONFIRMED, SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import Span, Stale, Step
from . import ga304_multi_loss_interaction as ga304
from .base import BACKWARD, Example, Rule, RuleContext, RuntimeCheck
from .fixes import enclosing_function
from .lifecycle import first_by_span, insert_before, statement_at


def cross_optimizer(stale: Stale, step: Step) -> bool:
    """The earlier backward was stepped for other optimizers than this one: GA304 reports it."""
    return bool(stale.by_stepped) and bool(step.stepped) and not set(stale.by_stepped) & set(step.stepped)


def _fix(ctx: RuleContext, carry: Span) -> Fix | None:
    """`h = h.detach()` before the assignment that carries a single tensor `h` into the iteration."""
    stmt, _ = statement_at(ctx, carry)
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    names = [t.id for t in (target.elts if isinstance(target, ast.Tuple) else [target]) if isinstance(t, ast.Name)]
    read = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
    carried = [n for n in names if n in read]
    if len(carried) != 1 or isinstance(target, ast.Attribute):
        return None
    name = carried[0]
    edit = insert_before(ctx, carry.path, stmt, f"{name} = {name}.detach() if {name} is not None else None")
    if edit is None:
        return None
    return Fix(f"Detach `{name}` at the iteration boundary", UNSAFE, (edit,))


def _made_beside(ctx: RuleContext, st: Stale, step: Step) -> bool:
    """The shared part is computed in the function holding the backward() (the training code)."""
    if st.op_span is None or st.op_span.path != step.span.path:
        return False
    tree = ctx.tree(step.span.path)
    if tree is None:
        return False
    return enclosing_function(tree, st.op_span.line) is enclosing_function(tree, step.span.line)


def _certainly_through(ctx: RuleContext, st: Stale, step: Step) -> bool:
    """This loss certainly reaches parameters of the optimizer whose backward() freed the graph (not
    only through a value that may be one of several: a list of every loss joined, as pix2pixHD's
    `[torch.mean(x) for x in losses]`)."""
    theirs = {p for o in ctx.model.optimizers if o.key in st.by_stepped for p in o.params}
    return bool(theirs & step.reached)


def check(ctx: RuleContext) -> list[Finding]:
    out = []
    told: set[Span] | None = None  # the backward() calls GA304 names
    for step in ctx.model.steps:
        for st in step.stale:
            if st.kind != "freed":
                continue
            cross = cross_optimizer(st, step)
            if cross:
                # GA304 reports a graph shared across optimizers where one model scored the other's output;
                # the other model's own output reused in this loss (D(real) of D's step in G's loss) is
                # this rule's: the second backward() raises all the same
                if told is None:
                    told = {s for f in ga304.check(ctx) for s in (f.span, *(r.span for r in f.related))}
                if step.span in told or not _certainly_through(ctx, st, step):
                    continue
            # across optimizers, the shared value made in the training code itself (`d_real = D(real)`
            # in the loop) is followed directly; made in a model's own code and gathered with the other
            # losses (pix2pixHD's one forward returning every loss as a list), it may be one of several
            direct = not cross or _made_beside(ctx, st, step)
            if st.earlier_iteration and st.carry is not None:
                msg = (
                    f"this assignment carries a tensor with the previous iteration's graph into `{step.loss}`; that "
                    f'graph was freed by the previous backward(), so `{step.loss}.backward()` raises "Trying to '
                    f'backward through the graph a second time"'
                )
                if st.empty_loop:
                    msg += (
                        " on an iteration where a loop that assigns the name afresh runs no iteration (the name "
                        "then keeps the previous iteration's value)"
                    )
                out.append(
                    RULE.finding(
                        st.carry,
                        msg,
                        confidence=SUSPICIOUS if st.empty_loop else CONFIRMED,
                        related=(
                            Related(step.span, f"`{step.loss}.backward()` reaches the old graph"),
                            Related(st.by_span, "the earlier backward() freed it"),
                        ),
                        fix=_fix(ctx, st.carry),
                    )
                )
            else:
                msg = (
                    f"`{step.loss}` shares part of its graph with a loss whose backward() already ran without "
                    f'`retain_graph=True`: that part was freed, so this backward() raises "Trying to backward '
                    f'through the graph a second time"'
                )
                if not direct:
                    msg += (
                        " (if it does share it: the two losses come from values the engine joined, a list or dict "
                        "of every loss of a model's forward)"
                    )
                out.append(
                    RULE.finding(
                        step.span,
                        msg,
                        confidence=CONFIRMED if direct else SUSPICIOUS,
                        related=(Related(st.by_span, "this backward() freed the shared graph"),)
                        + ((Related(st.op_span, "the shared part"),) if st.op_span else ()),
                    )
                )
    return first_by_span(out)


RULE = Rule(
    code="GA301",
    name="backward-through-freed-graph",
    family=BACKWARD,
    summary="a second backward() through a graph already freed",
    what="""
Flags a `backward()` that reaches graph an earlier `backward()` already freed: state carried
across iterations with its history (an RNN's hidden state, a running statistic kept on the module)
without `.detach()`, or two losses sharing a subgraph backpropagated one after the other without
`retain_graph=True` on the first. When the two losses belong to different optimizers (a GAN),
GA304 reports it where one model's output enters the other's loss; the other model's own output
reused in this loss (`D(real)` of the discriminator step in a feature-matching term of the
generator's loss) is reported here.
""",
    why="""
`backward()` frees the tensors each node saved; reaching those nodes again raises "Trying to
backward through the graph a second time" — at the second iteration, often after a long set-up.
Detaching the carried state truncates backpropagation at the iteration boundary (truncated BPTT).
""",
    example="""
state = None
for x, y in chunks:
    out, state = lstm(x, state)
    loss = criterion(head(out), y)
    loss.backward()
""",
    use_instead="""
state = None
for x, y in chunks:
    if state is not None:
        state = tuple(s.detach() for s in state)
    out, state = lstm(x, state)
    loss = criterion(head(out), y)
    loss.backward()
""",
    severity="critical",
    lookalike=(
        "A second backward() reaches a graph already freed: carried state is not detached at the iteration boundary."
    ),
    runtime=RuntimeCheck("raises", "the step raises: backward() through a graph already freed"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 4)
optimizer = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=1e-2)
stream = torch.randn(2, 30, 4)
h = None
for start in range(0, 30, 10):
    x = stream[:, start:start + 10]
    optimizer.zero_grad()
    out, h = rnn(x, h)  # <- GA301
    loss = nn.functional.mse_loss(head(out), x)
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 4)
optimizer = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=1e-2)
stream = torch.randn(2, 30, 4)
h = None
for start in range(0, 30, 10):
    x = stream[:, start:start + 10]
    optimizer.zero_grad()
    h = h.detach() if h is not None else None
    out, h = rnn(x, h)
    loss = nn.functional.mse_loss(head(out), x)
    loss.backward()
    optimizer.step()
""",
            runtime="error: backward through the graph a second time",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
trunk = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
cls_head, reg_head = nn.Linear(16, 3), nn.Linear(16, 1)
opt = torch.optim.SGD([*trunk.parameters(), *cls_head.parameters(), *reg_head.parameters()], lr=0.05)
for epoch in range(2):
    x, labels, values = torch.randn(8, 10), torch.randint(0, 3, (8,)), torch.randn(8, 1)
    opt.zero_grad()
    z = trunk(x)
    cls_loss = F.cross_entropy(cls_head(z), labels)
    reg_loss = F.mse_loss(reg_head(z), values)
    cls_loss.backward()
    reg_loss.backward()  # <- GA301
    opt.step()
""",
            runtime="error: backward through the graph a second time",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(7)
energy_net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(energy_net.parameters(), lr=1e-3)
for it in range(2):
    pos = torch.randn(4, 5, 3, requires_grad=True)
    energy = energy_net(pos).sum(dim=(1, 2))
    (de_dpos,) = torch.autograd.grad(energy.sum(), pos, create_graph=True, retain_graph=False)
    e_ref, f_ref = torch.randn(4), torch.randn(4, 5, 3)
    loss = (energy - e_ref).pow(2).mean() + (-de_dpos - f_ref).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # <- GA301
    opt.step()
""",
            runtime="error: backward through the graph a second time",
            note="create_graph=True keeps the graph only when retain_graph is not given: given False, it frees it",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(6)
featurizer = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
classifier = nn.Linear(16, 3)
opt = torch.optim.Adam(list(featurizer.parameters()) + list(classifier.parameters()), lr=1e-3)
for it in range(3):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    feats = featurizer(x)
    scores = (classifier(feats) * F.one_hot(y, 3)).sum()
    saliency = autograd.grad(scores, feats)[0]
    mask = (saliency < saliency.median()).float()
    loss = F.cross_entropy(classifier(feats * mask), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="autograd.grad(out, feats) frees the graph down to feats only: the featurizer's part is still there",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(2)
emb, rnn, proj = nn.Embedding(20, 8), nn.GRU(8, 16, batch_first=True), nn.Linear(16, 20)
params = [*emb.parameters(), *rnn.parameters(), *proj.parameters()]
opt = torch.optim.Adam(params, lr=3e-3)
corpus = torch.randint(0, 20, (2, 41))
h = torch.zeros(1, 2, 16)
for t0 in range(0, 40, 10):
    x, y = corpus[:, t0:t0 + 10], corpus[:, t0 + 1:t0 + 11]
    h = h.detach()
    out, h = rnn(emb(x), h)
    loss = nn.functional.cross_entropy(proj(out).flatten(0, 1), y.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="the carried state is detached at the iteration boundary",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
trunk = nn.Sequential(nn.Linear(9, 16), nn.ReLU())
head_a, head_b = nn.Linear(16, 2), nn.Linear(16, 1)
opt = torch.optim.Adam([*trunk.parameters(), *head_a.parameters(), *head_b.parameters()], lr=1e-3)
for it in range(3):
    x, ya, yb = torch.randn(12, 9), torch.randint(0, 2, (12,)), torch.randn(12, 1)
    opt.zero_grad()
    shared = trunk(x)
    loss_a = F.cross_entropy(head_a(shared), ya)
    loss_b = F.mse_loss(head_b(shared), yb)
    loss_a.backward(retain_graph=True)
    loss_b.backward()
    opt.step()
""",
            runtime="trains",
            note="the shared trunk's graph is retained for the second loss",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(8)
energy_net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(energy_net.parameters(), lr=1e-3)
for it in range(2):
    pos = torch.randn(4, 5, 3, requires_grad=True)
    energy = energy_net(pos).sum(dim=(1, 2))
    (de_dpos,) = torch.autograd.grad(energy.sum(), pos, create_graph=True)
    e_ref, f_ref = torch.randn(4), torch.randn(4, 5, 3)
    loss = (energy - e_ref).pow(2).mean() + (-de_dpos - f_ref).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="retain_graph defaults to create_graph: the energy's graph stays for the force loss",
        ),
    ),
)

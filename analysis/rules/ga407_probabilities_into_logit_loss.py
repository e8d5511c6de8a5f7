"""GA407 probabilities-into-logit-loss."""

import ast

from ..model.findings import UNSAFE, Finding, Fix
from ..model.model import Risk
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings, segment


def _fix(ctx: RuleContext, risk: Risk) -> Fix | None:
    """A `torch.softmax(logits, ...)` argument -> `logits` (cross_entropy) or `torch.log_softmax(...)`
    (nll_loss)."""
    text = ctx.text(risk.span)
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "softmax"
        and call.args
    ):
        return None
    if "nll_loss" in risk.detail:
        return Fix(
            "Pass log-probabilities: `log_softmax`",
            UNSAFE,
            (ctx.replace(risk.span, text.replace(".softmax(", ".log_softmax(", 1)),),
        )
    return Fix("Pass the logits", UNSAFE, (ctx.replace(risk.span, segment(text, call.args[0])),))


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            f"{r.detail}: the distribution normalises its logits itself (log_softmax, or a sigmoid), so "
            f"probabilities given as logits are squashed once more: every category stays within a factor e "
            f"of the others, the policy can never become confident and its gradients shrink; pass the logits "
            f"or `probs=`"
            if "as the `logits` of" in r.detail
            else f"{r.detail}: the loss expects logits (cross_entropy applies log_softmax itself, "
            f"binary_cross_entropy_with_logits a sigmoid) or log-probabilities (nll_loss); on probabilities "
            f"it can never reach 0 and its gradients shrink as the model gets confident, so training stalls"
        ),
        _fix,
    )


RULE = Rule(
    code="GA407",
    name="probabilities-into-logit-loss",
    family=NUMERICAL,
    summary="softmax or sigmoid outputs given to cross_entropy, softmax to nll_loss, sigmoid to BCEWithLogitsLoss",
    what="""
Flags the input of `cross_entropy`/`CrossEntropyLoss` when it is a softmax or sigmoid output, of
`nll_loss`/`NLLLoss` when it is a softmax (not a log_softmax), and of
`binary_cross_entropy_with_logits`/`BCEWithLogitsLoss` when it is a sigmoid output — directly,
through variables, helpers, or an `nn.Sequential` that ends in `nn.Softmax` or `nn.Sigmoid`. A
softmax computed next to the loss for a metric is not flagged. Also flags softmax or sigmoid outputs
given as the `logits=` of a `torch.distributions` class (`Categorical(logits=F.softmax(x))`), which
normalises them once more.
""",
    why="""
`cross_entropy` takes logits and applies `log_softmax` itself: on probabilities it computes
softmax twice, its minimum is far above 0 and its gradients vanish as outputs saturate. `nll_loss`
on probabilities (not log-probabilities) is negative and maximises the wrong quantity.
`BCEWithLogitsLoss` applies a sigmoid itself: on sigmoid outputs every prediction lies in
(0.5, 0.73), the loss cannot approach 0 and the model is pushed to saturate its first sigmoid.
""",
    example="""
probs = torch.softmax(model(x), dim=1)
loss = F.cross_entropy(probs, y)
""",
    use_instead="""
logits = model(x)
loss = F.cross_entropy(logits, y)
""",
    severity="medium",
    lookalike="The loss that expects logits is given probabilities.",
    runtime=RuntimeCheck(
        None,
        (
            "no runtime check: gradients flow and stay finite, the loss is only the wrong function of the"
            " model's output (probabilities squashed a second time)"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(50, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = nn.NLLLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
docs, topic = torch.rand(36, 50), torch.randint(0, 4, (36,))
for epoch in range(3):
    scores = model(docs)
    loss = criterion(torch.softmax(scores, dim=-1), topic)  # <- GA407
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(50, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = nn.NLLLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
docs, topic = torch.rand(36, 50), torch.randint(0, 4, (36,))
for epoch in range(3):
    scores = model(docs)
    loss = criterion(torch.log_softmax(scores, dim=-1), topic)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="it trains, towards the wrong objective",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
classifier = nn.Sequential(nn.Linear(9, 32), nn.ReLU(), nn.Linear(32, 3), nn.Softmax(dim=1))
loss_fn = nn.CrossEntropyLoss()
opt = torch.optim.RMSprop(classifier.parameters(), lr=1e-3)
features, classes = torch.randn(60, 9), torch.randint(0, 3, (60,))
for epoch in range(3):
    loss = loss_fn(classifier(features), classes)  # <- GA407
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="a Sequential that ends in nn.Softmax",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
scorer = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
criterion = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(scorer.parameters(), lr=1e-3)
clicks, clicked = torch.randn(48, 6), torch.randint(0, 2, (48, 1)).float()
for epoch in range(3):
    loss = criterion(scorer(clicks), clicked)  # <- GA407
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="a sigmoid output into BCEWithLogitsLoss: the sigmoid applied twice",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
backbone = nn.Sequential(nn.Linear(9, 32), nn.ReLU())
main_head, aux_head = nn.Linear(32, 3), nn.Linear(32, 3)
opt = torch.optim.Adam([*backbone.parameters(), *main_head.parameters(), *aux_head.parameters()], lr=2e-3)
X, y = torch.randn(60, 9), torch.randint(0, 3, (60,))
for epoch in range(3):
    h = backbone(X)
    logits = main_head(h)
    confidence = torch.softmax(logits, dim=1).max(1).values.mean()
    loss = F.cross_entropy(logits, y) + 0.5 * F.nll_loss(F.log_softmax(aux_head(h), dim=1), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="logits into cross_entropy, log_softmax into nll_loss, a softmax for a metric",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
scorer = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(scorer.parameters(), lr=1e-3)
clicks, clicked = torch.randn(48, 6), torch.randint(0, 2, (48, 1)).float()
for epoch in range(3):
    logits = scorer(clicks)
    loss = criterion(logits, clicked)
    accuracy = ((torch.sigmoid(logits) > 0.5).float() == clicked).float().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="logits into BCEWithLogitsLoss, a sigmoid only for a metric",
        ),
    ),
)

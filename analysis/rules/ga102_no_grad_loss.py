"""GA102 no-grad-loss."""

from ..model.findings import SAFE, UNSAFE, Finding, Fix
from ..model.model import Cut, Step
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import cut_findings
from .fixes import called_once, unwrap_with, with_only_feeds_loss


def _fix(ctx: RuleContext, cut: Cut, step: Step) -> Fix | None:
    line = ctx.line(cut.span.path, cut.span.line)
    stripped = line.strip()
    if stripped.startswith("@"):
        if cut.span.line != cut.span.end_line or line[: cut.span.col].strip() != "@":
            return None
        # safe only when the training step is the function's one caller: an evaluation that also
        # calls it would start recording graphs
        how = SAFE if called_once(ctx, cut.span.path, cut.span.line) else UNSAFE
        return Fix(
            f"Remove the `{stripped}` decorator", how, (ctx.delete_lines(cut.span.path, cut.span.line, cut.span.line),)
        )
    edits = unwrap_with(ctx, cut.span)
    if not edits:
        return None
    # safe only when the block computes nothing but the loss's inputs, in the training step itself
    how = SAFE if with_only_feeds_loss(ctx, cut.span, step) else UNSAFE
    return Fix(f"Remove `with {ctx.text(cut.span)}:`", how, edits)


def check(ctx: RuleContext) -> list[Finding]:
    return cut_findings(
        ctx,
        ("nograd",),
        RULE,
        lambda cut, what, step: (
            f"`{ctx.text(cut.span) or 'no_grad'}` records no graph for {what}: "
            f"`{step.loss or 'the loss'}` gets no gradient through them"
        ),
        _fix,
    )


RULE = Rule(
    code="GA102",
    name="no-grad-loss",
    family=GRAPH_BREAK,
    summary="the loss's forward pass runs under no_grad / inference_mode",
    what="""
Flags a `torch.no_grad()`, `torch.inference_mode()` or `torch.set_grad_enabled(False)` region,
or a function decorated with `@torch.no_grad()` / `@torch.inference_mode()`, in which the
forward pass of a loss that is later given to `backward()` runs, when it cuts optimized
parameters off from that loss; also a scalar loss term computed there and added to a loss that
trains (`ce + lam * mmd` with the MMD under `no_grad`): the term is a constant that only shifts the
loss's value, even though its parameters get gradient from the rest. Evaluation under `no_grad`,
features cached from a frozen encoder and targets computed without gradient are not flagged.
""",
    why="""
Nothing computed inside the region is recorded for autograd. If the whole loss is computed
there, `backward()` raises "element 0 of tensors does not require grad and does not have a
grad_fn"; if only part of the model runs there, those parameters silently never train.
""",
    example="""
with torch.no_grad():
    logits = model(x)
    loss = criterion(logits, y)
loss.backward()
""",
    use_instead="""
logits = model(x)
loss = criterion(logits, y)
loss.backward()
""",
    severity="critical",
    lookalike=(
        "backward() is called on the value computed under the no-grad context: evaluation under `no_grad`"
        " is valid only when no backward() follows."
    ),
    runtime=RuntimeCheck(
        "raises",
        (
            "the step raises: backward() on a value computed without a graph (or, with another path, "
            "`into` fails for the parameters only the no-grad part reaches)"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    with torch.no_grad():  # <- GA102
        logits = model(x)
        loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    logits = model(x)
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="error: does not require grad",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    @torch.inference_mode()  # <- GA102
    def compute_loss(self, x, y):
        return F.mse_loss(self.model(x).squeeze(-1), y)

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = self.compute_loss(x, y)
        loss.backward()
        self.opt.step()


torch.manual_seed(1)
trainer = Trainer(nn.Sequential(nn.Linear(4, 8), nn.SiLU(), nn.Linear(8, 1)))
for _ in range(2):
    trainer.train_step(torch.randn(5, 4), torch.randn(5))
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def compute_loss(self, x, y):
        return F.mse_loss(self.model(x).squeeze(-1), y)

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = self.compute_loss(x, y)
        loss.backward()
        self.opt.step()


torch.manual_seed(1)
trainer = Trainer(nn.Sequential(nn.Linear(4, 8), nn.SiLU(), nn.Linear(8, 1)))
for _ in range(2):
    trainer.train_step(torch.randn(5, 4), torch.randn(5))
""",
            runtime="error: does not require grad",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
head = nn.Linear(16, 2)
optimizer = torch.optim.Adam([*backbone.parameters(), *head.parameters()], lr=1e-2)
for _ in range(3):
    x, y = torch.randn(6, 10), torch.randint(0, 2, (6,))
    with torch.set_grad_enabled(False):  # <- GA102
        feats = backbone(x)
    loss = F.cross_entropy(head(feats), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
head = nn.Linear(16, 2)
optimizer = torch.optim.Adam([*backbone.parameters(), *head.parameters()], lr=1e-2)
for _ in range(3):
    x, y = torch.randn(6, 10), torch.randint(0, 2, (6,))
    feats = backbone(x)
    loss = F.cross_entropy(head(feats), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: backbone",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)


@torch.no_grad()
def evaluate(x, y):
    model.eval()
    return criterion(model(x), y).item()


for epoch in range(2):
    model.train()
    x, y = torch.randn(8, 5), torch.randint(0, 2, (8,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        val = evaluate(torch.randn(4, 5), torch.randint(0, 2, (4,)))
""",
            runtime="trains",
            note="evaluation under no_grad",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)
encoder = nn.Sequential(nn.Linear(10, 16), nn.GELU())
encoder.eval()
X, y = torch.randn(30, 10), torch.randint(0, 2, (30,))
with torch.no_grad():
    cached = encoder(X)
probe = nn.Linear(16, 2)
opt = torch.optim.SGD(probe.parameters(), lr=0.5)
for _ in range(3):
    loss = F.cross_entropy(probe(cached), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="a linear probe on features of an encoder nobody optimizes",
        ),
    ),
)

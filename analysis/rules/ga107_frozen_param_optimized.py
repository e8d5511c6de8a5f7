"""GA107 frozen-param-optimized."""

import ast

from ..model.findings import UNSAFE, Finding, Fix, Related
from ..model.model import EventKind, Param, Span
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names


def _fix(ctx: RuleContext, span: Span) -> Fix | None:
    lines = ctx.statement_lines(span)
    if lines is None:
        return None
    first, last = lines
    tree = ctx.tree(span.path)
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, ast.For) and len(node.body) == 1 and node.body[0].lineno == first and not node.orelse:
                first, last = node.lineno, node.end_lineno or node.lineno
                break
    return Fix(
        "Remove the freeze (or build the optimizer from parameters that require grad)",
        UNSAFE,
        (ctx.delete_lines(span.path, first, last),),
    )


def check(ctx: RuleContext) -> list[Finding]:
    found: dict[Span, Finding] = {}
    freezes = [f for f in ctx.model.freezes if not f.value and f.strong]
    if not freezes:
        return []
    for step in ctx.model.steps:
        if step.kind != EventKind.BACKWARD:
            continue
        frozen = step.frozen - step.unfrozen_later
        if not frozen:
            continue
        for o in step.optimizers:
            if o.key not in step.stepped:
                continue
            hit: set[Param] = set()
            # unseen parameters of a library model are frozen and optimized like any (closed); others the
            # engine could not see (a layer it could not build, LoRA's adapters) may be the very ones a
            # name-filtered freeze spared: that all of them are frozen is then not shown
            params = {p for p in o.params if not p.opaque or p.closed}
            unseen = any(p.opaque and not p.closed for p in o.params)
            if params and params <= frozen and not unseen and not any(g.filtered for g in o.groups):
                hit = params
            elif len(o.groups) > 1:
                for g in o.groups:
                    gp = {p for p in g.params if not p.opaque or p.closed}
                    g_unseen = any(p.opaque and not p.closed for p in g.params)
                    if gp and g.exact and not g.filtered and not g_unseen and gp <= frozen:
                        hit |= gp
            if not hit:
                continue
            for fr in freezes:
                if fr.seq < step.seq and fr.params & hit:
                    shown = fr.params & hit
                    every = params <= frozen
                    msg = f"{describe(shown)} are frozen here and never unfrozen, yet `{o.name}` is given them " + (
                        "as all it optimizes: backward() raises or nothing trains"
                        if every
                        else "as their own param group: that group never trains"
                    )
                    key = fr.anchor
                    if key in found:
                        continue
                    rel: tuple[Related, ...] = (
                        Related(o.span, f"`{o.name}` ({o.type}) is built with them here"),
                        Related(step.span, f"`{step.loss}.backward()`"),
                    )
                    if fr.anchor != fr.span:
                        rel = (Related(fr.span, "requires_grad is switched off here"),) + rel
                    found[key] = RULE.finding(
                        fr.anchor, msg, params=names(shown), related=rel, fix=_fix(ctx, fr.anchor)
                    )
    return list(found.values())


RULE = Rule(
    code="GA107",
    name="frozen-param-optimized",
    family=GRAPH_BREAK,
    summary="frozen parameters are what the optimizer is meant to train",
    what="""
Flags a freeze (`p.requires_grad = False`, `module.requires_grad_(False)`, a freeze loop or a
freezing helper) that is never undone, when the optimizer is given those parameters as what
should train: every parameter it optimizes is frozen, or a frozen module is passed as its own
param group (typically with its own learning rate). Freezing with an optimizer built from the
parameters that still require grad, gradual unfreezing, and a frozen embedding inside a model
optimized as a whole are not flagged.
""",
    why="""
Frozen parameters get no gradient, so the optimizer skips them: a group configured with its
own learning rate never trains, and if everything is frozen, `backward()` raises "element 0 of
tensors does not require grad".
""",
    example="""
encoder.requires_grad_(False)
optimizer = torch.optim.AdamW([
    {"params": encoder.parameters(), "lr": 1e-4},
    {"params": head.parameters(), "lr": 1e-2},
])
""",
    use_instead="""
optimizer = torch.optim.AdamW([
    {"params": encoder.parameters(), "lr": 1e-4},
    {"params": head.parameters(), "lr": 1e-2},
])
""",
    severity="high",
    premises=("step", "writes", "groups"),
    lookalike=(
        "The frozen parameters are what the optimizer is given to train (all of them, or a group of their"
        " own); a frozen backbone beside an optimizer over what still requires grad is the valid use."
    ),
    runtime=RuntimeCheck("updates", "`updates` fails: a param group holds only frozen parameters, which never change"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
for p in model.parameters():
    p.requires_grad = False  # <- GA107
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
for _ in range(2):
    x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
for _ in range(2):
    x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
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

torch.manual_seed(1)
encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
classifier = nn.Linear(16, 2)
encoder.requires_grad_(False)  # <- GA107
optimizer = torch.optim.AdamW([
    {"params": encoder.parameters(), "lr": 1e-4},
    {"params": classifier.parameters(), "lr": 1e-2},
])
for _ in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(classifier(encoder(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
classifier = nn.Linear(16, 2)
optimizer = torch.optim.AdamW([
    {"params": encoder.parameters(), "lr": 1e-4},
    {"params": classifier.parameters(), "lr": 1e-2},
])
for _ in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(classifier(encoder(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: encoder",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False


torch.manual_seed(2)
embedding = nn.Embedding(30, 8)
encoder = nn.GRU(8, 12, batch_first=True)
head = nn.Linear(12, 3)
freeze(encoder)  # <- GA107
optimizer = torch.optim.Adam([
    {"params": embedding.parameters(), "lr": 1e-3},
    {"params": encoder.parameters(), "lr": 1e-4},
    {"params": head.parameters(), "lr": 1e-2},
])
for _ in range(3):
    tokens, labels = torch.randint(0, 30, (4, 7)), torch.randint(0, 3, (4,))
    _, h = encoder(embedding(tokens))
    loss = F.cross_entropy(head(h[-1]), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False


torch.manual_seed(2)
embedding = nn.Embedding(30, 8)
encoder = nn.GRU(8, 12, batch_first=True)
head = nn.Linear(12, 3)
optimizer = torch.optim.Adam([
    {"params": embedding.parameters(), "lr": 1e-3},
    {"params": encoder.parameters(), "lr": 1e-4},
    {"params": head.parameters(), "lr": 1e-2},
])
for _ in range(3):
    tokens, labels = torch.randint(0, 30, (4, 7)), torch.randint(0, 3, (4,))
    _, h = encoder(embedding(tokens))
    loss = F.cross_entropy(head(h[-1]), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: encoder",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
backbone = nn.Sequential(nn.Linear(12, 24), nn.ReLU())
head = nn.Linear(24, 4)
for p in backbone.parameters():
    p.requires_grad = False
params = [p for p in [*backbone.parameters(), *head.parameters()] if p.requires_grad]
optimizer = torch.optim.Adam(params, lr=1e-2)
for _ in range(3):
    x, y = torch.randn(10, 12), torch.randint(0, 4, (10,))
    loss = F.cross_entropy(head(backbone(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="a frozen backbone and an optimizer over what still requires grad",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)
backbone = nn.Sequential(nn.Linear(8, 16), nn.GELU())
head = nn.Linear(16, 3)
optimizer = torch.optim.SGD([
    {"params": backbone.parameters(), "lr": 0.01},
    {"params": head.parameters(), "lr": 0.1},
], momentum=0.9)
backbone.requires_grad_(False)
for epoch in range(3):
    if epoch == 1:
        backbone.requires_grad_(True)
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    loss = F.cross_entropy(head(backbone(x)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="gradual unfreezing",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(40, 10)
        self.emb.weight.requires_grad = False
        self.mlp = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, tokens):
        return self.mlp(self.emb(tokens).mean(dim=1))


torch.manual_seed(5)
model = BagOfWords()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randint(0, 40, (8, 7))), torch.randint(0, 3, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="frozen embeddings inside a model optimized as a whole",
        ),
    ),
)

"""GA306 nonleaf-grad-read."""

import ast

from ..model.findings import SAFE, Finding, Fix
from ..model.model import GradRead
from .base import BACKWARD, Example, Rule, RuleContext, RuntimeCheck
from .lifecycle import first_by_span, insert_after


def _fix(ctx: RuleContext, read: GradRead) -> Fix | None:
    """`t.retain_grad()` right after the statement in the same function that assigns `t`."""
    text = ctx.text(read.span)
    if not text.endswith(".grad"):
        return None
    name = text[: -len(".grad")]
    if not name.isidentifier():
        return None
    tree = ctx.tree(read.span.path)
    if tree is None:
        return None
    best: ast.Assign | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and (node.end_lineno or node.lineno) < read.span.line
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        ) and (best is None or node.lineno > best.lineno):
            best = node
    if best is None:
        return None
    edit = insert_after(ctx, read.span.path, best, f"{name}.retain_grad()")
    return Fix(f"Keep its gradient: `{name}.retain_grad()` before backward()", SAFE, (edit,)) if edit else None


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    rebinds = {u.span for u in model.leaf_updates if u.kind == "rebind"}
    nonleaf = {n.span for n in model.nonleaf}  # GA113's: every read of a non-leaf used as a weight is its defect
    out = []
    for read in model.grad_reads:
        if read.stmt in rebinds or read.made & nonleaf:
            continue  # `w = w - lr * w.grad` is GA111's
        msg = (
            f"`{ctx.text(read.span)}` reads the gradient of a non-leaf tensor (computed by an op, not created as a "
            f"parameter): backward() does not keep it, so it is always None (torch warns) unless retain_grad() was "
            f"called on it before backward()"
        )
        out.append(RULE.finding(read.span, msg, fix=_fix(ctx, read)))
    return first_by_span(out)


RULE = Rule(
    code="GA306",
    name="nonleaf-grad-read",
    family=BACKWARD,
    summary="reading .grad of a non-leaf tensor without retain_grad()",
    what="""
Flags `.grad` read on a tensor computed by an op (an activation, or a weight made with
`requires_grad=True` and then scaled or moved, which is no longer a leaf) when `retain_grad()`
was not called on it. Parameters and leaves made with `requires_grad=True` are not flagged; the
rebinding `w = w - lr * w.grad` is GA111's.
""",
    why="""
Autograd keeps `.grad` only for leaves. A non-leaf's `.grad` is `None` (torch warns "The .grad
attribute of a Tensor that is not a leaf Tensor is being accessed"): a hand-written update then
fails with a `TypeError` on `None`, or a gradient-norm log silently reads nothing.
""",
    example="""
hidden = F.relu(fc1(x))
loss = F.cross_entropy(fc2(hidden), y)
loss.backward()
print(hidden.grad.norm())
""",
    use_instead="""
hidden = F.relu(fc1(x))
hidden.retain_grad()
loss = F.cross_entropy(fc2(hidden), y)
loss.backward()
print(hidden.grad.norm())
""",
    severity="low",
    lookalike="`.grad` of a non-leaf tensor is read without `retain_grad()`.",
    runtime=RuntimeCheck(
        "warns",
        (
            "torch warns that `.grad` of a non-leaf tensor is read (it is None), which the script test "
            "turns into a failure"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
fc1, fc2 = nn.Linear(8, 16), nn.Linear(16, 3)
opt = torch.optim.Adam([*fc1.parameters(), *fc2.parameters()], lr=1e-3)
for it in range(2):
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    hidden = F.relu(fc1(x))
    loss = F.cross_entropy(fc2(hidden), y)
    opt.zero_grad()
    loss.backward()
    hidden_grad = hidden.grad  # <- GA306
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
fc1, fc2 = nn.Linear(8, 16), nn.Linear(16, 3)
opt = torch.optim.Adam([*fc1.parameters(), *fc2.parameters()], lr=1e-3)
for it in range(2):
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    hidden = F.relu(fc1(x))
    hidden.retain_grad()
    loss = F.cross_entropy(fc2(hidden), y)
    opt.zero_grad()
    loss.backward()
    hidden_grad = hidden.grad
    opt.step()
""",
            runtime="warning: is not a leaf Tensor is being accessed",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(1)
encoder, head = nn.Sequential(nn.Linear(6, 20), nn.ReLU()), nn.Linear(20, 2)
opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.05)
for it in range(3):
    feats = encoder(torch.randn(12, 6))
    feats.retain_grad()
    loss = nn.functional.mse_loss(head(feats), torch.randn(12, 2))
    opt.zero_grad()
    loss.backward()
    act_norm = feats.grad.norm().item()
    w_norm = head.weight.grad.norm().item()
    opt.step()
""",
            runtime="trains",
            note="retain_grad() on the activation; a parameter's .grad",
        ),
    ),
)

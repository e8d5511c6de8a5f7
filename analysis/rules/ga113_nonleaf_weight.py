"""GA113 nonleaf-weight."""

import ast

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, Finding, Fix, Related
from ..model.model import NonLeaf, Span
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import names


def _fix(ctx: RuleContext, nl: NonLeaf) -> Fix | None:
    """`torch.randn(n, m, requires_grad=True) * 0.01` -> `(torch.randn(n, m) * 0.01).requires_grad_()`."""
    text = ctx.text(nl.span)
    try:
        expr = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    calls = [
        n
        for n in ast.walk(expr)
        if isinstance(n, ast.Call)
        and any(
            k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True for k in n.keywords
        )
    ]
    if len(calls) != 1:
        return None
    call = calls[0]
    kw = next(k for k in call.keywords if k.arg == "requires_grad")
    seg = ast.get_source_segment(text, call)
    inner = ast.unparse(ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k is not kw]))
    if seg is None or text.count(seg) != 1:
        return None
    new = text.replace(seg, inner)
    return Fix(
        "Apply the op first, then mark the result: `(...).requires_grad_()`",
        SAFE,
        (ctx.replace(nl.span, f"({new}).requires_grad_()"),),
    )


def check(ctx: RuleContext) -> list[Finding]:
    out = []
    seen: set[Span] = set()
    for nl in ctx.model.nonleaf:
        if nl.span in seen:
            continue
        seen.add(nl.span)
        if nl.use == "optimizer":
            consequence = 'the optimizer raises "can\'t optimize a non-leaf Tensor"'
        elif nl.use.startswith("module"):
            consequence = (
                "the module keeps that result: `.parameters()` never lists it, so no optimizer trains it "
                "(the parameter it came from is held by nothing)"
            )
        else:
            consequence = "its .grad stays None, so the hand-written update fails"
        msg = (
            f"`{ctx.text(nl.span)}` makes a new tensor from the one created with requires_grad=True: the name holds "
            f"a non-leaf, not the weight that gets gradients, and {consequence}"
        )
        if nl.use == "module-maybe":
            msg += " (on a path its arguments choose)"
        elif nl.use == "module-convert":
            msg += (
                " (when a conversion is needed: on the device and dtype it already has, the call returns the "
                "parameter itself; on an accelerator `.to(device)` copies)"
            )
        out.append(
            RULE.finding(
                nl.span,
                msg,
                confidence=SUSPICIOUS if nl.use in ("module-maybe", "module-convert") else CONFIRMED,
                params=names(nl.params),
                related=(Related(nl.stmt, "used as a trainable weight here"),),
                fix=_fix(ctx, nl),
            )
        )
    return out


RULE = Rule(
    code="GA113",
    name="nonleaf-weight",
    family=GRAPH_BREAK,
    summary="a requires_grad tensor passed through an op before being used as a weight",
    what="""
Flags a tensor created with `requires_grad=True` and then passed through an op (`* 0.01`,
`.double()`, `.to(device)`, `.cuda()`, `.view(...)`, `.t()`) before it is used as a trainable
weight: given to an optimizer, updated from its own `.grad`, or kept by a module in place of the
parameter (`self.a = nn.Parameter(t).squeeze()`: the module holds the squeezed copy, which
`.parameters()` never lists; suspicious when the assignment sits under a condition, which a class
checked on its own decides with made-up arguments). The anchor is the expression that follows
`requires_grad=True` (or the `nn.Parameter(...)`). Applying the op first and then `requires_grad_()`, or wrapping the
result in `nn.Parameter`, is not flagged, nor is `.float()` of an `nn.Parameter` made in torch's
default float32 (no dtype given, no conversion where it is made): it returns the parameter itself.
""",
    why="""
The op's result is a new, non-leaf tensor; the leaf that receives gradients is unreachable.
`torch.optim` refuses it ("can't optimize a non-leaf Tensor"), and a hand-written update finds
`.grad` is `None`. On an accelerator `.to(device)`/`.cuda()` always copy, so a script that works
on the CPU breaks on the GPU it was written for.
""",
    example="""
w = torch.randn(10, 1, requires_grad=True) * 0.01
optimizer = torch.optim.SGD([w], lr=0.5)
""",
    use_instead="""
w = (torch.randn(10, 1) * 0.01).requires_grad_()
optimizer = torch.optim.SGD([w], lr=0.5)
""",
    severity="critical",
    premises=("step",),
    lookalike=(
        "The tensor handed on as a weight is the result of an op, not the leaf created with `requires_grad=True`."
    ),
    runtime=RuntimeCheck(
        "updates",
        (
            "`updates` fails (or building the optimizer raises): the weight is not a leaf, so it gets no "
            "`.grad` and never changes"
        ),
    ),
    supersedes=("GA108",),
    check=check,
    invalid=(
        Example(
            """import torch

torch.manual_seed(0)
X = torch.randn(100, 10)
y = (X[:, :3].sum(1, keepdim=True) > 0).float()
w = torch.randn(10, 1, requires_grad=True) * 0.01  # <- GA113
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.5)
for epoch in range(3):
    loss = torch.nn.functional.binary_cross_entropy_with_logits(X @ w + b, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch

torch.manual_seed(0)
X = torch.randn(100, 10)
y = (X[:, :3].sum(1, keepdim=True) > 0).float()
w = (torch.randn(10, 1) * 0.01).requires_grad_()
b = torch.zeros(1, requires_grad=True)
optimizer = torch.optim.SGD([w, b], lr=0.5)
for epoch in range(3):
    loss = torch.nn.functional.binary_cross_entropy_with_logits(X @ w + b, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="error: non-leaf",
        ),
        Example(
            """import torch
import torch.nn.functional as F

torch.manual_seed(1)
X = torch.randn(60, 4, dtype=torch.float64)
y = torch.randint(0, 3, (60,))
W = torch.randn(4, 3, requires_grad=True).double()  # <- GA113
for it in range(3):
    loss = F.cross_entropy(X @ W, y)
    loss.backward()
    with torch.no_grad():
        W -= 0.1 * W.grad
        W.grad.zero_()
""",
            fixed="""import torch
import torch.nn.functional as F

torch.manual_seed(1)
X = torch.randn(60, 4, dtype=torch.float64)
y = torch.randint(0, 3, (60,))
W = (torch.randn(4, 3).double()).requires_grad_()
for it in range(3):
    loss = F.cross_entropy(X @ W, y)
    loss.backward()
    with torch.no_grad():
        W -= 0.1 * W.grad
        W.grad.zero_()
""",
            runtime="error: NoneType",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn.functional as F

torch.manual_seed(2)
device = "cuda" if torch.cuda.is_available() else "cpu"
W1 = (torch.randn(8, 16, device=device) * 0.1).requires_grad_()
b1 = torch.zeros(16, device=device, requires_grad=True)
W2 = torch.nn.Parameter(torch.randn(16, 2).double().float() * 0.1)
optimizer = torch.optim.Adam([W1, b1, W2], lr=1e-2)
for step in range(3):
    x, y = torch.randn(32, 8, device=device), torch.randint(0, 2, (32,), device=device)
    loss = F.cross_entropy(torch.relu(x @ W1 + b1) @ W2, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="the op first, then requires_grad_(); nn.Parameter",
        ),
    ),
)

"""GA111 inplace-leaf-update."""

import ast
from collections.abc import Iterable

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, UNSAFE, Finding, Fix
from ..model.model import LeafUpdate, Span
from ..source.prebuilt import replace
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import describe, names


def _wrap(ctx: RuleContext, span: Span, body_lines: Iterable[str], applicability: str, message: str) -> Fix | None:
    lines = ctx.statement_lines(span)
    if lines is None:
        return None
    indent = ctx.indent_of(span.path, span.line)
    torch_name = ctx.alias(span.path, "torch")
    step = ctx.indent_unit(span.path)
    text = f"{indent}with {torch_name}.no_grad():\n" + "".join(f"{indent}{step}{b}\n" for b in body_lines)
    whole = Span(span.path, lines[0], 0, lines[1] + 1, 0)
    return Fix(message, applicability, (ctx.replace(whole, text),))


def _fix(ctx: RuleContext, upd: LeafUpdate) -> Fix | None:
    span = upd.span
    lines = ctx.statement_lines(span)
    if lines is None:
        return None
    indent = ctx.indent_of(span.path, span.line)
    body = [ctx.line(span.path, n) for n in range(lines[0], lines[1] + 1)]
    body = [b[len(indent) :] if b.startswith(indent) else b.lstrip() for b in body]
    if upd.kind == "leaf":
        return _wrap(ctx, span, body, SAFE, "Update the leaf under torch.no_grad()")
    text = "\n".join(body)
    try:
        stmt = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return None
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.BinOp)
        and isinstance(stmt.value.op, (ast.Sub, ast.Add))
        and isinstance(stmt.value.left, ast.Name)
        and stmt.value.left.id == stmt.targets[0].id
    ):
        name = stmt.targets[0].id
        op = "-=" if isinstance(stmt.value.op, ast.Sub) else "+="
        rhs = ast.get_source_segment(text, stmt.value.right)
        return _wrap(ctx, span, [f"{name} {op} {rhs}"], UNSAFE, "Update the leaf in place under torch.no_grad()")
    return None


def check(ctx: RuleContext) -> list[Finding]:
    found: dict[Span, Finding] = {}
    merged: dict[Span, list[LeafUpdate]] = {}
    for upd in ctx.model.leaf_updates:
        if upd.kind == "leaf" and upd.nograd:
            continue
        if upd.kind == "rebind":
            # a leaf made anew each iteration (an attack's input copy: `x.requires_grad_()`, its .grad
            # read once, then `x = x + eps * grad.sign()`) is a step of the attack, not a weight that
            # stops training; the next iteration makes a fresh leaf
            kept = frozenset(p for p in upd.params if not (p.kind in ("leaf", "input") and p.in_loop))
            if not kept:
                continue
            upd = replace(upd, params=kept)
        merged.setdefault(upd.span, []).append(upd)
    for _span, group in merged.items():
        # through a conversion only when every update here is: a direct one is the leaf itself
        through = next((u.through for u in group if u.through), "") if all(u.through for u in group) else ""
        upd = replace(group[0], params=frozenset().union(*(u.params for u in group)), through=through)
        if upd.kind == "leaf" and upd.through:
            named = all(not p.name.startswith("<") for p in upd.params)
            leaf = f"{describe(upd.params)}, a leaf that requires grad" if named else "a leaf that requires grad"
            msg = (
                f"in-place update of the result of `.{upd.through}()` on {leaf}, outside torch.no_grad(): where "
                f"nothing needs converting (on the CPU, already that dtype)"
                f' `.{upd.through}()` returns the leaf itself, and torch raises "a leaf Variable that '
                f'requires grad is being used in an in-place operation"; elsewhere it works on a copy'
            )
            confidence = SUSPICIOUS
        elif upd.kind == "leaf":
            one = len({p.name for p in upd.params}) == 1 and not any(p.opaque for p in upd.params)
            msg = (
                f"in-place update of {describe(upd.params)}, "
                f"{'a leaf that requires' if one else 'leaves that require'} grad, outside "
                f'torch.no_grad(): torch raises "a leaf Variable that requires grad is being used in an '
                f'in-place operation"'
            )
            confidence = CONFIRMED
        else:
            msg = (
                f"`{upd.name} = ...` replaces the leaf {describe(upd.params)} with a computed tensor: the new "
                f"`{upd.name}` is not a leaf, its `.grad` stays None and it stops training"
            )
            confidence = CONFIRMED if upd.in_loop else SUSPICIOUS
        # an accumulator made a leaf by mistake wants no torch.no_grad() around its sum
        fix = None if upd.through else _fix(ctx, upd)
        found[upd.span] = RULE.finding(upd.span, msg, confidence=confidence, params=names(upd.params), fix=fix)
    return list(found.values())


RULE = Rule(
    code="GA111",
    name="inplace-leaf-update",
    family=GRAPH_BREAK,
    summary="a manual update of a leaf that requires grad outside torch.no_grad()",
    what="""
Flags a hand-written parameter update done in place outside `torch.no_grad()`
(`w -= lr * w.grad`, `w.add_(...)`, `w[0] = v`), and one done by rebinding
(`w = w - lr * w.grad`). Updates under `torch.no_grad()`, through `.data`, and `nn.init.*` are
not flagged.
""",
    why="""
In place, autograd refuses: "a leaf Variable that requires grad is being used in an in-place
operation". By rebinding, `w` becomes the output of an op (a non-leaf): its `.grad` stays `None`
and the next update fails or silently stops.
""",
    example="""
loss.backward()
W -= lr * W.grad
""",
    use_instead="""
loss.backward()
with torch.no_grad():
    W -= lr * W.grad
""",
    severity="critical",
    premises=("step",),
    lookalike=(
        "The leaf is changed outside `torch.no_grad()`; the same update inside `no_grad` is the valid manual step."
    ),
    runtime=RuntimeCheck("raises", "the step raises: a leaf that requires grad changed in place outside `no_grad`"),
    check=check,
    invalid=(
        Example(
            """import torch

torch.manual_seed(0)
X = torch.randn(32, 4)
Y = torch.sin(X.sum(dim=1, keepdim=True))
W1 = torch.randn(4, 16, requires_grad=True)
W2 = torch.randn(16, 1, requires_grad=True)
for epoch in range(3):
    loss = ((torch.tanh(X @ W1) @ W2 - Y) ** 2).mean()
    loss.backward()
    W1 -= 0.01 * W1.grad  # <- GA111
    W2 -= 0.01 * W2.grad  # <- GA111
    W1.grad.zero_()
    W2.grad.zero_()
""",
            fixed="""import torch

torch.manual_seed(0)
X = torch.randn(32, 4)
Y = torch.sin(X.sum(dim=1, keepdim=True))
W1 = torch.randn(4, 16, requires_grad=True)
W2 = torch.randn(16, 1, requires_grad=True)
for epoch in range(3):
    loss = ((torch.tanh(X @ W1) @ W2 - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        W1 -= 0.01 * W1.grad
    with torch.no_grad():
        W2 -= 0.01 * W2.grad
    W1.grad.zero_()
    W2.grad.zero_()
""",
            runtime="error: a leaf Variable that requires grad is being used in an in-place operation",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


def sgd_step(params, lr):
    for p in params:
        if p.grad is not None:
            p.sub_(lr * p.grad)  # <- GA111
            p.grad = None


torch.manual_seed(1)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(6, 3)), torch.randint(0, 2, (6,)))
    loss.backward()
    sgd_step(model.parameters(), lr=0.1)
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


def sgd_step(params, lr):
    for p in params:
        if p.grad is not None:
            with torch.no_grad():
                p.sub_(lr * p.grad)
            p.grad = None


torch.manual_seed(1)
model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(6, 3)), torch.randint(0, 2, (6,)))
    loss.backward()
    sgd_step(model.parameters(), lr=0.1)
""",
            runtime="error: a leaf Variable that requires grad is being used in an in-place operation",
        ),
        Example(
            """import torch

torch.manual_seed(2)
x = torch.linspace(-1, 1, 20).unsqueeze(1)
y = 3.0 * x - 0.5
w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for epoch in range(3):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    w = w - 0.1 * w.grad  # <- GA111
    b = b - 0.1 * b.grad  # <- GA111
""",
            fixed="""import torch

torch.manual_seed(2)
x = torch.linspace(-1, 1, 20).unsqueeze(1)
y = 3.0 * x - 0.5
w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for epoch in range(3):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    with torch.no_grad():
        b -= 0.1 * b.grad
""",
            runtime="error: unsupported operand type",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn.functional as F

torch.manual_seed(3)
X, y = torch.randn(30, 5), torch.randint(0, 3, (30,))
W = (0.1 * torch.randn(5, 3)).requires_grad_()
b = torch.zeros(3, requires_grad=True)
for epoch in range(4):
    loss = F.cross_entropy(X @ W + b, y)
    loss.backward()
    with torch.no_grad():
        W -= 0.5 * W.grad
        b.sub_(0.5 * b.grad)
        W.grad.zero_()
        b.grad.zero_()
""",
            runtime="trains",
            note="the update under torch.no_grad()",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(4)
critic = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1, bias=False))
with torch.no_grad():
    for m in critic:
        if isinstance(m, nn.Linear):
            m.weight.normal_(0.0, 0.02)
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-3)
for _ in range(3):
    loss = critic(torch.randn(16, 2)).mean() - critic(torch.randn(16, 2) + 2.0).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    for p in critic.parameters():
        p.data.clamp_(-0.05, 0.05)
""",
            runtime="trains",
            note="init under no_grad; weight clipping through .data",
        ),
    ),
)

"""GA110 inplace-saved-tensor."""

import ast
import re

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import Span
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck

_OPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.Mod: "%",
}


def _fix(ctx: RuleContext, span: Span) -> Fix | None:
    lines = ctx.statement_lines(span)
    if lines is None or lines[0] != lines[1]:
        return None
    text = ctx.text(span)
    try:
        stmt = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return None
    if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _OPS and isinstance(stmt.target, (ast.Name, ast.Attribute)):
        # `x[i] += v` stays in place when spelled out; an attribute may be read elsewhere as the
        # old object, so only a local name is rebound safely
        how = SAFE if isinstance(stmt.target, ast.Name) else UNSAFE
        target = ast.get_source_segment(text, stmt.target)
        value = ast.get_source_segment(text, stmt.value)
        if isinstance(stmt.value, (ast.BinOp, ast.BoolOp, ast.IfExp, ast.Compare)):
            value = f"({value})"
        return Fix(
            "Use the out-of-place form", how, (ctx.replace(span, f"{target} = {target} {_OPS[type(stmt.op)]} {value}"),)
        )
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        func = stmt.value.func
        if func.attr.endswith("_") and isinstance(func.value, ast.Name):
            name = func.value.id
            rest = text[func.end_col_offset :]
            return Fix(
                f"Use `{func.attr[:-1]}` out of place",
                SAFE,
                (ctx.replace(span, f"{name} = {name}.{func.attr[:-1]}{rest}"),),
            )
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        base = stmt.targets[0].value
        if isinstance(base, ast.Name):
            indent = ctx.indent_of(span.path, span.line)
            at = Span(span.path, span.line, 0, span.line, 0)
            return Fix(
                f"Clone `{base.id}` before writing into it",
                SAFE,
                (ctx.replace(at, f"{indent}{base.id} = {base.id}.clone()\n"),),
            )
    return None


def check(ctx: RuleContext) -> list[Finding]:
    found: dict[Span, Finding] = {}
    for step in ctx.model.steps:
        for hit in step.inplace:
            if hit.span in found:
                continue
            op = re.sub(r"_$", "", hit.op)
            msg = (
                f"`.detach_()` detaches in place a tensor that `{op}` saved for backward as its input: "
                f'`{step.loss}.backward()` raises "Trying to use a saved tensor that has been detached in-place"'
                if ".detach_(" in ctx.text(hit.span)
                else f"in-place change of a tensor that `{op}` saved for backward: "
                f'`{step.loss}.backward()` raises "one of the variables needed for gradient computation has '
                f'been modified by an inplace operation"'
            )
            found[hit.span] = RULE.finding(
                hit.span,
                msg,
                related=(
                    Related(hit.op_span, f"`{op}` saves the tensor here"),
                    Related(step.span, f"`{step.loss}.backward()`"),
                ),
                fix=_fix(ctx, hit.span),
            )
    for span, certain in ctx.model.split_writes:
        if span in found:
            continue
        found[span] = RULE.finding(
            span,
            "in-place change of one of the views `split`/`chunk`/`unbind` returned, while it requires grad: "
            'torch raises here ("... is a view and is being modified inplace. This view is the output of a '
            "function that returns multiple views. Such functions do not allow the output views to be "
            'modified inplace")'
            + ("" if certain else " when gradient is on and a parameter flows into it, as the engine could not prove"),
            confidence=CONFIRMED if certain else SUSPICIOUS,
            fix=_fix(ctx, span),
        )
    for hit, unit in ctx.model.unit_inplace:
        if hit.span in found:
            continue  # a training step reaches it: that finding says more
        op = re.sub(r"_$", "", hit.op)
        found[hit.span] = RULE.finding(
            hit.span,
            f"in-place change of a tensor that `{op}` saved for backward (seen running `{unit}` on its own with "
            f"inputs that require grad: no training step in the checked code reaches it): a backward through its "
            f'result raises "one of the variables needed for gradient computation has been modified by an inplace '
            f'operation"',
            confidence=SUSPICIOUS,
            related=(Related(hit.op_span, f"`{op}` saves the tensor here"),),
            fix=_fix(ctx, hit.span),
            data={"unit": unit},
        )
    return list(found.values())


RULE = Rule(
    code="GA110",
    name="inplace-saved-tensor",
    family=GRAPH_BREAK,
    summary="an in-place change to a tensor an earlier op saved for backward",
    what="""
Flags an in-place change (`+=`, `*=`, `x[i] = v`, `x.add_()`, `relu_()`,
`nn.ReLU(inplace=True)`, `out=`) to a tensor that an earlier differentiable op saved for its
backward (the output of `exp`/`sigmoid`/`tanh`/`softmax`/`relu`, the input of `mul`, `matmul`,
`pow`, `div`, `nn.Linear`...), before the `backward()` that needs it; `x.detach_()` of a tensor
an op saved as its input (an RNN state that the value head read) likewise. In-place ops on tensors no
op saved (a residual `out += identity` after a normalisation layer) are not flagged. A module's
`forward` that no training step in the checked code reaches is run on its own, on inputs that
require grad: an op there that saves a tensor and an in-place change of it later in the same
`forward` are reported as suspicious (the inputs may not require grad in the real program).
Also flags an in-place change of one of the views a multi-output op returned (`q, k, v =
proj(x).chunk(3, -1)`, then `q *= scale`) while it requires grad: autograd forbids it outright and
raises at that statement, whatever is saved.
""",
    why="""
Autograd checks a version counter: `backward()` raises "one of the variables needed for
gradient computation has been modified by an inplace operation". The training step never
completes.
""",
    example="""
gate = torch.sigmoid(self.gate(x))
gate *= mask
""",
    use_instead="""
gate = torch.sigmoid(self.gate(x))
gate = gate * mask
""",
    severity="critical",
    premises=("step", "graph"),
    lookalike=(
        "An earlier op saved the tensor for its backward and it changes in place before backward(); "
        "in-place changes of tensors no op saved, or after backward(), are valid."
    ),
    runtime=RuntimeCheck("raises", "the step raises: a tensor saved for backward was modified in place"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedLayer(nn.Module):
    def __init__(self, d=10):
        super().__init__()
        self.value = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x, mask):
        gate = torch.sigmoid(self.gate(x))
        gate *= mask  # <- GA110
        return self.value(x) * gate


torch.manual_seed(0)
layer, head = GatedLayer(), nn.Linear(10, 2)
opt = torch.optim.Adam([*layer.parameters(), *head.parameters()], lr=1e-3)
for _ in range(2):
    x, mask = torch.randn(6, 10), (torch.rand(6, 10) > 0.2).float()
    loss = F.cross_entropy(head(layer(x, mask)), torch.randint(0, 2, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class GatedLayer(nn.Module):
    def __init__(self, d=10):
        super().__init__()
        self.value = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x, mask):
        gate = torch.sigmoid(self.gate(x))
        gate = gate * mask
        return self.value(x) * gate


torch.manual_seed(0)
layer, head = GatedLayer(), nn.Linear(10, 2)
opt = torch.optim.Adam([*layer.parameters(), *head.parameters()], lr=1e-3)
for _ in range(2):
    x, mask = torch.randn(6, 10), (torch.rand(6, 10) > 0.2).float()
    loss = F.cross_entropy(head(layer(x, mask)), torch.randint(0, 2, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="error: modified by an inplace operation",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


def masked_weights(scores, pad):
    w = (scores - scores.amax(dim=1, keepdim=True)).exp()
    w[pad] = 0.0  # <- GA110
    return w / (w.sum(dim=1, keepdim=True) + 1e-6)


torch.manual_seed(1)
score, cls = nn.Linear(8, 1, bias=False), nn.Linear(8, 3)
optimizer = torch.optim.SGD([*score.parameters(), *cls.parameters()], lr=0.1)
pad = torch.arange(5).unsqueeze(0) >= torch.tensor([5, 3, 4, 2]).unsqueeze(1)
for _ in range(2):
    seq = torch.randn(4, 5, 8)
    w = masked_weights(score(seq).squeeze(-1), pad)
    loss = F.cross_entropy(cls((w.unsqueeze(-1) * seq).sum(dim=1)), torch.randint(0, 3, (4,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


def masked_weights(scores, pad):
    w = (scores - scores.amax(dim=1, keepdim=True)).exp()
    w = w.clone()
    w[pad] = 0.0
    return w / (w.sum(dim=1, keepdim=True) + 1e-6)


torch.manual_seed(1)
score, cls = nn.Linear(8, 1, bias=False), nn.Linear(8, 3)
optimizer = torch.optim.SGD([*score.parameters(), *cls.parameters()], lr=0.1)
pad = torch.arange(5).unsqueeze(0) >= torch.tensor([5, 3, 4, 2]).unsqueeze(1)
for _ in range(2):
    seq = torch.randn(4, 5, 8)
    w = masked_weights(score(seq).squeeze(-1), pad)
    loss = F.cross_entropy(cls((w.unsqueeze(-1) * seq).sum(dim=1)), torch.randint(0, 3, (4,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="error: modified by an inplace operation",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(2):
    x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
    clean = net(x)
    x.add_(0.05 * torch.randn_like(x))  # <- GA110
    jittered = net(x)
    loss = F.cross_entropy(clean, y) + F.mse_loss(jittered.softmax(1), clean.softmax(1))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for _ in range(2):
    x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
    clean = net(x)
    x = x.add(0.05 * torch.randn_like(x))
    jittered = net(x)
    loss = F.cross_entropy(clean, y) + F.mse_loss(jittered.softmax(1), clean.softmax(1))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="error: modified by an inplace operation",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.bn1 = nn.Linear(d, d, bias=False), nn.BatchNorm1d(d)
        self.fc2, self.bn2 = nn.Linear(d, d, bias=False), nn.BatchNorm1d(d)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.fc1(x)))
        out = self.bn2(self.fc2(out))
        out += x
        return self.relu(out)


torch.manual_seed(3)
model = nn.Sequential(nn.Linear(5, 12), Block(12), nn.Linear(12, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(16, 5)), torch.randint(0, 2, (16,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="a residual add into an output no op saved",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)
proj, out = nn.Linear(7, 16), nn.Linear(16, 4)
prior = nn.Parameter(torch.zeros(16))
opt = torch.optim.Adam([*proj.parameters(), *out.parameters(), prior], lr=1e-2)
stats = torch.zeros(2)
for _ in range(3):
    x = torch.randn(12, 7) * 3 + 1
    x.sub_(x.mean(dim=0)).div_(x.std(dim=0) + 1e-5)
    h = proj(x)
    h += prior
    logits = out(torch.tanh(h))
    loss = F.cross_entropy(logits, torch.randint(0, 4, (12,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        stats.mul_(0.9).add_(torch.stack([loss.detach(), logits.argmax(1).float().mean()]), alpha=0.1)
""",
            runtime="trains",
            note="in-place on data before the forward pass and on statistics after backward",
        ),
    ),
)

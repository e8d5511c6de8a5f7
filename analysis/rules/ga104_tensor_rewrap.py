"""GA104 tensor-rewrap."""

import ast

from ..model.findings import SAFE, UNSAFE, Finding, Fix
from ..model.model import Cut, Step
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import cut_findings, segment


def _fix(ctx: RuleContext, cut: Cut, step: Step) -> Fix | None:
    if cut.detail == "nn.Parameter()":
        return None  # a module's parameter slot takes only a Parameter: the design changes, not a call
    text = ctx.text(cut.span)
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or not call.args:
        return None
    arg = call.args[0]
    others = [k for k in call.keywords if k.arg not in ("requires_grad", "dtype", "device")]
    if others or len(call.args) != 1:
        return None
    # dropping a dtype= or device= changes the value, not only its flow
    how = UNSAFE if any(k.arg in ("dtype", "device") for k in call.keywords) else SAFE
    arg_text = segment(text, arg)
    if isinstance(arg, (ast.List, ast.Tuple)) or cut.note == "list":
        torch_name = ctx.alias(cut.span.path, "torch")
        return Fix(f"Use `{torch_name}.stack`", UNSAFE, (ctx.replace(cut.span, f"{torch_name}.stack({arg_text})"),))
    return Fix("Use the tensor itself", how, (ctx.replace(cut.span, arg_text),))


def check(ctx: RuleContext) -> list[Finding]:
    return cut_findings(
        ctx,
        ("rewrap",),
        RULE,
        lambda cut, what, step: (
            f"`{cut.detail}` copies values that carry gradient into a new tensor with no "
            f"history: `{step.loss or 'the loss'}` gets no gradient to {what}"
        ),
        _fix,
    )


RULE = Rule(
    code="GA104",
    name="tensor-rewrap",
    family=GRAPH_BREAK,
    summary="`torch.tensor(t)` rebuilt from tensors that carry gradient",
    what="""
Flags `torch.tensor(t)`, `torch.Tensor(t)`, `torch.FloatTensor(t)`, `torch.tensor([t1, t2])`
and `torch.tensor(loss, requires_grad=True)` built from tensors that carry gradient from
optimized parameters into a loss, and `nn.Parameter(W)` of such a tensor outside a module's
`__init__` (a weight computed by another layer at each forward). Tensors built from Python data
(targets, class weights) are not flagged, nor a parameter made from another one while a model is
built (copied weights).
""",
    why="""
`torch.tensor` copies the values and starts a new leaf: the graph behind them is gone. Passing
`requires_grad=True` makes `backward()` run, but on a leaf no parameter is connected to, so
nothing upstream trains (torch also warns "To copy construct from a tensor...").
""",
    example="""
losses = [F.mse_loss(r, y_reg), F.cross_entropy(c, y_cls)]
loss = torch.tensor(losses, requires_grad=True).sum()
""",
    use_instead="""
losses = [F.mse_loss(r, y_reg), F.cross_entropy(c, y_cls)]
loss = torch.stack(losses).sum()
""",
    severity="high",
    lookalike=(
        "The tensor rebuilt with `torch.tensor(...)` carries gradient from optimized parameters into the "
        "loss; rebuilding labels or data, which carry none, is the valid use."
    ),
    runtime=RuntimeCheck("into", "`into` fails: the rebuilt tensor carries no gradient back to the parameters"),
    supersedes=("GA106",),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(7, 12), nn.ReLU(), nn.Linear(12, 1))
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(10, 7), (torch.rand(10) > 0.5).float()
    out = net(x).squeeze(1)
    loss = torch.tensor(criterion(out, y), requires_grad=True)  # <- GA104
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(7, 12), nn.ReLU(), nn.Linear(12, 1))
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(10, 7), (torch.rand(10) > 0.5).float()
    out = net(x).squeeze(1)
    loss = criterion(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: net",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
trunk = nn.Linear(9, 16)
reg, cls = nn.Linear(16, 1), nn.Linear(16, 3)
log_vars = nn.Parameter(torch.zeros(2))
optimizer = torch.optim.Adam([*trunk.parameters(), *reg.parameters(), *cls.parameters(), log_vars], lr=1e-2)
for _ in range(3):
    x = torch.randn(12, 9)
    h = torch.relu(trunk(x))
    losses = [F.mse_loss(reg(h).squeeze(1), x.sum(1)), F.cross_entropy(cls(h), torch.randint(0, 3, (12,)))]
    stacked = torch.tensor(losses)  # <- GA104
    loss = (torch.exp(-log_vars) * stacked + log_vars).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
trunk = nn.Linear(9, 16)
reg, cls = nn.Linear(16, 1), nn.Linear(16, 3)
log_vars = nn.Parameter(torch.zeros(2))
optimizer = torch.optim.Adam([*trunk.parameters(), *reg.parameters(), *cls.parameters(), log_vars], lr=1e-2)
for _ in range(3):
    x = torch.randn(12, 9)
    h = torch.relu(trunk(x))
    losses = [F.mse_loss(reg(h).squeeze(1), x.sum(1)), F.cross_entropy(cls(h), torch.randint(0, 3, (12,)))]
    stacked = torch.stack(losses)
    loss = (torch.exp(-log_vars) * stacked + log_vars).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: trunk",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn

rows = [[0.2, 1.5, -0.3], [1.1, -0.7, 0.4], [-1.2, 0.3, 0.9], [0.5, 0.5, -1.0]]
inputs = torch.tensor(rows)
targets = torch.tensor([0, 1, 2, 0])
weights = torch.tensor([1.0, 2.0, 0.5])
torch.manual_seed(2)
clf = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 3))
loss_fn = nn.CrossEntropyLoss(weight=weights)
opt = torch.optim.Adam(clf.parameters(), lr=1e-2)
for _ in range(3):
    loss = loss_fn(clf(inputs), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="tensors built from Python data",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
stages = nn.ModuleList([nn.Linear(6, 6) for _ in range(3)])
exits = nn.ModuleList([nn.Linear(6, 2) for _ in range(3)])
opt = torch.optim.SGD([*stages.parameters(), *exits.parameters()], lr=0.1)
weights = torch.tensor([0.3, 0.3, 1.0])
for _ in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    per_exit = []
    for stage, head in zip(stages, exits):
        x = torch.relu(stage(x))
        per_exit.append(F.cross_entropy(head(x), y))
    loss = (torch.stack(per_exit) * weights).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="losses combined with torch.stack",
        ),
    ),
)

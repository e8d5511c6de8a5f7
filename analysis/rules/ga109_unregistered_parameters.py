"""GA109 unregistered-parameters."""

import ast

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import EventKind, Param, Span, Step, Unregistered
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import names


def _fix(ctx: RuleContext, rec: Unregistered, confirmed: bool) -> Fix | None:
    """Registering is safe only when nothing trains the hidden parameters today: otherwise the
    optimizers built from `.parameters()` would start holding them too. A plain tensor may be
    meant as a buffer: making it a Parameter is never applied unasked."""
    container = SAFE if confirmed else UNSAFE
    span = rec.value_span
    if span is None:
        return None
    text = ctx.text(span)
    nn = ctx.alias(span.path, "torch.nn")
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    only_tensors = all(p.kind == "leaf" for p in rec.params)
    if rec.kind == "tensor":
        if isinstance(node, ast.Call) and any(k.arg == "requires_grad" for k in node.keywords):
            kws = [k for k in node.keywords if k.arg != "requires_grad"]
            call = ast.Call(func=node.func, args=node.args, keywords=kws)
            inner = ast.unparse(call)
            return Fix(f"Register it: `{nn}.Parameter(...)`", UNSAFE, (ctx.replace(span, f"{nn}.Parameter({inner})"),))
        return Fix(f"Register it: `{nn}.Parameter(...)`", UNSAFE, (ctx.replace(span, f"{nn}.Parameter({text})"),))
    if rec.kind == "dict":
        if isinstance(node, ast.Dict) and not node.keys:
            return Fix(f"Use `{nn}.ModuleDict`", container, (ctx.replace(span, f"{nn}.ModuleDict()"),))
        if isinstance(node, (ast.Dict, ast.DictComp)):
            cls = "ParameterDict" if only_tensors else "ModuleDict"
            return Fix(f"Use `{nn}.{cls}`", container, (ctx.replace(span, f"{nn}.{cls}({text})"),))
        return None
    cls = "ParameterList" if only_tensors else "ModuleList"
    if isinstance(node, ast.List) and not node.elts:
        return Fix(f"Use `{nn}.{cls}`", container, (ctx.replace(span, f"{nn}.{cls}()"),))
    if isinstance(node, (ast.List, ast.ListComp)):
        return Fix(f"Use `{nn}.{cls}`", container, (ctx.replace(span, f"{nn}.{cls}({text})"),))
    if isinstance(node, ast.Tuple):
        inner = text[1:-1] if text.startswith("(") and text.endswith(")") else text
        return Fix(f"Use `{nn}.{cls}`", container, (ctx.replace(span, f"{nn}.{cls}([{inner}])"),))
    return None


def check(ctx: RuleContext) -> list[Finding]:
    out = []
    seen: set[Span] = set()
    for rec in ctx.model.unregistered:
        if rec.span in seen:
            continue
        hit: set[Param] = set()
        step_hit: Step | None = None
        owned = set(ctx.model.manual)
        for o in ctx.model.optimizers:
            owned |= o.params
        # with no optimizer and no update anywhere (a test or a saliency map that only runs
        # backward()), "no optimizer updates them" proves nothing: nothing is updated at all
        trains = bool(ctx.model.optimizers or ctx.model.manual)
        for step in ctx.model.steps:
            if step.kind != EventKind.BACKWARD or not trains:
                continue
            reached = (step.reached & rec.params) - step.frozen - step.trained - owned
            if reached:
                hit |= reached
                step_hit = step_hit or step
        trained_apart = rec.params & owned
        if not hit and not rec.fresh and not trained_apart:
            continue
        seen.add(rec.span)
        shown = hit or rec.params
        if rec.kind == "tensor":
            what = "is a plain tensor with requires_grad=True, not an nn.Parameter"
            them = "it"
        else:
            what = {"list": "is a plain list", "dict": "is a plain dict", "tuple": "is a tuple"}[
                rec.kind
            ] + " of modules, not an nn.ModuleList/ModuleDict"
            them = "their parameters"
        rel: tuple[Related, ...]
        if hit and step_hit is not None:  # (found together)
            owner = rec.owner
            msg = (
                f"`{owner}.{rec.attr}` {what}: `{owner}.parameters()` never yields {them}, so they feed "
                f"`{step_hit.loss}` but no optimizer updates them"
            )
            confidence = CONFIRMED
            rel = (Related(step_hit.span, f"`{step_hit.loss}.backward()`"),)
        elif trained_apart:
            # an optimizer of their own still trains them: the defect is what the module misses
            msg = (
                f"`{rec.owner}.{rec.attr}` {what}: an optimizer of their own still trains {them}, but "
                f"`{rec.owner}.parameters()` and `state_dict()` miss them (a checkpoint saves none of "
                f"them) and `.to(device)` leaves them where they are"
            )
            confidence = SUSPICIOUS
            rel = ()
        else:
            msg = f"`{rec.owner_type}.{rec.attr}` {what}: `.parameters()`, `.to()` and `state_dict()` never see {them}"
            confidence = SUSPICIOUS
            rel = ()
        out.append(
            RULE.finding(
                rec.span,
                msg,
                confidence=confidence,
                params=names(shown),
                related=rel,
                fix=_fix(ctx, rec, confidence == CONFIRMED),
            )
        )
    return out


RULE = Rule(
    code="GA109",
    name="unregistered-parameters",
    family=GRAPH_BREAK,
    summary="submodules in a plain list/dict, or weights as plain tensors, on an nn.Module",
    what="""
Flags an `nn.Module` attribute that holds submodules in a plain `list`, `dict` or `tuple`, or a
weight kept as a plain tensor with `requires_grad=True`: `Module.parameters()` never yields
them. Confirmed when they feed a loss that no optimizer updates them for, in a program that
updates parameters; suspicious when the class is only defined, or when nothing is updated anywhere
(a backward() run only for its gradients). Lists of modules that are also registered as attributes are not flagged.
""",
    why="""
`nn.Module` registers only `nn.Module` and `nn.Parameter` attributes (and `ModuleList`,
`ModuleDict`, `ParameterList`...). Hidden layers get gradients but an optimizer built from
`model.parameters()` never updates them; they are also missing from `state_dict()`, `.to()`
and `.train()/.eval()`.
""",
    example="""
self.hidden = [nn.Linear(width, width) for _ in range(depth)]
""",
    use_instead="""
self.hidden = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
""",
    severity="high",
    premises=("writes",),
    lookalike=(
        "The container holds modules or trainable tensors on an `nn.Module`, so `.parameters()` never "
        "yields them; buffers and constants kept in lists hold nothing trainable."
    ),
    runtime=RuntimeCheck(
        "updates",
        (
            '`updates` fails naming the parameters kept in a plain list or dict ("not registered"): no '
            "optimizer built from `.parameters()` holds them"
        ),
    ),
    supersedes=("GA108",),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, width=16, depth=2):
        super().__init__()
        self.inp = nn.Linear(6, width)
        self.hidden = [nn.Linear(width, width) for _ in range(depth)]  # <- GA109
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        x = F.relu(self.inp(x))
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.out(x)


torch.manual_seed(0)
model = MLP()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    x = torch.randn(16, 6)
    loss = F.mse_loss(model(x), x.pow(2).sum(dim=1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, width=16, depth=2):
        super().__init__()
        self.inp = nn.Linear(6, width)
        self.hidden = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.out = nn.Linear(width, 1)

    def forward(self, x):
        x = F.relu(self.inp(x))
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.out(x)


torch.manual_seed(0)
model = MLP()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    x = torch.randn(16, 6)
    loss = F.mse_loss(model(x), x.pow(2).sum(dim=1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model.hidden",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHead(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 20), nn.ReLU())
        self.heads = {}  # <- GA109
        for name, n_out in tasks.items():
            self.heads[name] = nn.Linear(20, n_out)

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}


torch.manual_seed(1)
net = MultiHead({"color": 3, "shape": 4})
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    outs = net(torch.randn(12, 10))
    loss = F.cross_entropy(outs["color"], torch.randint(0, 3, (12,))) + \\
        F.cross_entropy(outs["shape"], torch.randint(0, 4, (12,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHead(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 20), nn.ReLU())
        self.heads = nn.ModuleDict()
        for name, n_out in tasks.items():
            self.heads[name] = nn.Linear(20, n_out)

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}


torch.manual_seed(1)
net = MultiHead({"color": 3, "shape": 4})
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    outs = net(torch.randn(12, 10))
    loss = F.cross_entropy(outs["color"], torch.randint(0, 3, (12,))) + \\
        F.cross_entropy(outs["shape"], torch.randint(0, 4, (12,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="no-update: net.heads",
        ),
        Example(
            """import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.gamma = torch.ones(dim, requires_grad=True)  # <- GA109

    def forward(self, x):
        return x * x.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt() * self.gamma


torch.manual_seed(2)
fc1, norm, fc2 = nn.Linear(5, 16), RMSNorm(16), nn.Linear(16, 1)
model = nn.Sequential(fc1, norm, nn.ReLU(), fc2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    x = torch.randn(8, 5)
    loss = nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * x.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt() * self.gamma


torch.manual_seed(2)
fc1, norm, fc2 = nn.Linear(5, 16), RMSNorm(16), nn.Linear(16, 1)
model = nn.Sequential(fc1, norm, nn.ReLU(), fc2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    x = torch.randn(8, 5)
    loss = nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: norm.gamma",
        ),
        Example(
            """import torch
import torch.nn as nn


class MaskedFrames(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        emb = torch.Tensor(dim)
        emb.requires_grad = True
        self.mask_emb = nn.init.normal_(emb, std=0.1)  # <- GA109
        self.proj = nn.Linear(dim, 4)

    def forward(self, x, mask):
        return self.proj(torch.where(mask.unsqueeze(-1), self.mask_emb, x))


torch.manual_seed(3)
model = MaskedFrames()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    x, mask = torch.randn(2, 6, 8), torch.rand(2, 6) < 0.5
    loss = model(x, mask).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model.mask_emb",
            note="requires_grad set on a plain tensor a module's __init__ keeps: a weight no optimizer is given",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class ResMLP(nn.Module):
    def __init__(self, dim=12, n_blocks=3):
        super().__init__()
        self.blocks = nn.ModuleList()
        for _ in range(n_blocks):
            self.blocks.append(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU()))
        self.scales = nn.ParameterList([nn.Parameter(torch.full((dim,), 0.5)) for _ in range(n_blocks)])
        self.head = nn.Linear(dim, 2)

    def forward(self, x):
        for block, s in zip(self.blocks, self.scales):
            x = x + s * block(x)
        return self.head(x)


torch.manual_seed(3)
model = ResMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(10, 12)), torch.randint(0, 2, (10,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="ModuleList and ParameterList",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Linear(6, 12)
        self.stage2 = nn.Linear(12, 8)
        self.stages = [self.stage1, self.stage2]
        self.head = nn.Linear(8, 1)
        self.register_buffer("offset", torch.linspace(-1.0, 1.0, 8))

    def forward(self, x):
        for stage in self.stages:
            x = torch.tanh(stage(x))
        return self.head(x + self.offset)


torch.manual_seed(4)
model = TwoStage()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-2)
for _ in range(3):
    x = torch.randn(14, 6)
    loss = F.mse_loss(model(x), x[:, :2].sum(dim=1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="a list of modules that are registered as attributes too",
        ),
    ),
)

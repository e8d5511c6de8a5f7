"""GA108 param-not-optimized."""

import ast
import re
from collections.abc import Collection, Iterable

from ..model.findings import CONFIRMED, SUSPICIOUS, UNSAFE, Finding, Fix, Related
from ..model.model import EventKind, Optimizer, Param, Span, Step
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import ADAPTERS, describe, module_of, names, plural
from .fixes import enclosing_function


def _root(path: str) -> str:
    return path.split(".", 1)[0]


def _fix_created(ctx: RuleContext, span: Span, opt: Optimizer, params: Collection[Param]) -> Fix | None:
    lines = ctx.statement_lines(span)
    if lines is None or opt.name.startswith("<"):
        return None
    m = re.match(r"\s*([A-Za-z_][\w.]*(?:\[[^\]]+\])?)\s*=(?!=)", ctx.line(span.path, span.line))
    if m is None:
        return None
    target = m.group(1)
    is_param = all(p.kind != "param" or p.module == p.name for p in params) or all(p.name == target for p in params)
    group = f"[{target}]" if is_param else f"{target}.parameters()"
    if any(p.name.endswith(ADAPTERS) for p in params):
        # adapters sit among the parameters the optimizer already holds (now frozen): only the
        # trainable ones it does not hold, or torch refuses a parameter in two groups
        group = (
            f"[p for p in {target}.parameters() if p.requires_grad "
            f"and all(p is not q for g in {opt.name}.param_groups for q in g['params'])]"
        )
    indent = ctx.indent_of(span.path, span.line)
    text = f'{indent}{opt.name}.add_param_group({{"params": {group}}})\n'
    at = Span(span.path, lines[1] + 1, 0, lines[1] + 1, 0)
    return Fix(f"Add the new parameters to `{opt.name}`", UNSAFE, (ctx.replace(at, text),))


def _layer_weight(p: Param) -> bool:
    """A weight or bias a layer registers (`fc.weight`, `attn.in_proj_bias`, `lstm.weight_ih_l0`), as
    opposed to a tensor the code made and named itself (`self.mask`, `self.feat_mask`)."""
    last = p.name.rsplit(".", 1)[-1]
    return last in _LAYER_NAMES or last.startswith(("weight_", "bias_"))


# nn.MultiheadAttention's own names besides weight_* / bias_* (nn.Linear, conv, norm: weight, bias;
# RNNs: weight_ih_l0, bias_hh_l0...)
_LAYER_NAMES = frozenset(
    ("weight", "bias", "in_proj_weight", "in_proj_bias", "q_proj_weight", "k_proj_weight", "v_proj_weight")
)


def _fix_group(ctx: RuleContext, opt: Optimizer, params: Iterable[Param]) -> Fix | None:
    if len(opt.groups) != 1:
        return None
    g = opt.groups[0]
    text = ctx.text(g.span)
    owner = module_of(params)
    m = re.fullmatch(r"([A-Za-z_][\w]*)((?:\.[A-Za-z_]\w*)+)\.parameters\(\)", text)
    if m is None or not owner or _root(owner) != m.group(1):
        return None
    return Fix(f"Optimize all of `{m.group(1)}`", UNSAFE, (ctx.replace(g.span, f"{m.group(1)}.parameters()"),))


def _never_handed(
    ctx: RuleContext, step: Step, stepped: list[Optimizer], rest: set[Param], found: dict[Span, Finding]
) -> None:
    """An optimizer built from parameters the engine cannot name (`Adam(self.actor.parameters())` of
    an actor handed in) holds none of the parameters the program made itself and never gave to any
    code it could not see: no unseen code can have put them there (CARES's PPO `log_std`, a Parameter
    on an agent that is no nn.Module)."""
    handed = ctx.model.handed
    if handed is None:
        return  # exec/eval ran: it may reach anything
    o = stepped[0]
    tree = ctx.tree(o.span.path)
    if tree is None:
        return
    where = enclosing_function(tree, o.span.line)
    # a Parameter of no module (a module's may be what the unnamed parameters are: a custom
    # `parameters()`, a model built elsewhere), made before the optimizer in the function that builds
    # it: what that function was given from outside existed before it, and so cannot hold it
    own = {
        p
        for p in rest
        if p.kind == "param"
        and not p.opaque
        and p.module == p.name
        and p.span is not None
        and p.span.path == o.span.path
        and p.span.line < o.span.line
        and enclosing_function(tree, p.span.line) is where
        and p not in handed
    }
    if not own:
        return
    if o.span in found:
        return
    found[o.span] = RULE.finding(
        o.span,
        f"{describe(own)} feed{'' if plural(own) else 's'} `{step.loss}` but {'are' if plural(own) else 'is'} in no "
        f"param group: `{o.name}` is built from parameters the engine cannot name, and "
        f"{'they were' if plural(own) else 'it was'} never handed to any code it could not see, so "
        f"{'they never train' if plural(own) else 'it never trains'}",
        params=names(own),
        related=(Related(step.span, f"`{step.loss}.backward()`"),),
        confidence=SUSPICIOUS,
    )


def check(ctx: RuleContext) -> list[Finding]:
    found: dict[Span, Finding] = {}
    unregistered: set[Param] = set()
    for u in ctx.model.unregistered:
        unregistered |= u.params
    # a parameter a module lost when it kept an op's result instead (`nn.Parameter(t).squeeze()`):
    # GA113 reports the one defect
    for nl in ctx.model.nonleaf:
        if nl.use.startswith("module"):
            unregistered |= nl.params
    # updated by hand from their .grad, or changed in place while training (a target network's soft
    # update, an EMA, `.data` assignments): they change, not by an optimizer
    manual = ctx.model.manual | ctx.model.written
    # plain leaves whose .grad the code reads itself (a saliency map, an attack's input gradient): differentiated
    # with respect to, not weights an optimizer forgot
    manual |= {p for p in ctx.model.grad_read if p.kind == "leaf"}
    for step in ctx.model.steps:
        if step.kind != EventKind.BACKWARD:
            continue
        stepped = [o for o in step.optimizers if o.key in step.stepped]
        if not stepped:
            continue
        optimized: set[Param] = set()
        for o in step.optimizers:
            optimized |= o.params
        blocked = step.frozen | step.maybe_frozen | unregistered | manual | optimized
        # a plain tensor made with requires_grad=True inside the loop is made anew each iteration: an input
        # differentiated with respect to (adversarial noise, a saliency map), not a weight meant to learn
        cand = {
            p
            for p in step.reached
            if (p.kind == "param" or (p.kind == "leaf" and not p.in_loop)) and not p.origin and p not in blocked
        }
        if not cand:
            continue
        first = min(stepped, key=lambda o: o.seq)
        late: dict[Span, set[Param]] = {}
        for n in ctx.model.new_params:
            if n.seq > first.seq and n.params & cand:
                late.setdefault(n.span, set()).update(n.params & cand)
        for span, ps in late.items():
            where = (
                "in the training loop"
                if any(n.in_loop for n in ctx.model.new_params if n.span == span)
                else "after the optimizer was built"
            )
            msg = (
                f"{describe(ps)} {'are' if plural(ps) else 'is'} created {where} and never added to "
                f"`{first.name}`: `{step.loss}` sends them gradient, but nothing updates them"
            )
            if span not in found:
                found[span] = RULE.finding(
                    span,
                    msg,
                    params=names(ps),
                    related=(
                        Related(first.span, f"`{first.name}` ({first.type}) is built here"),
                        Related(step.span, f"`{step.loss}.backward()`"),
                    ),
                    fix=_fix_created(ctx, span, first, ps),
                )
        # a module the script holds in eval() and no optimizer is a fixed network the loss is measured
        # through (VGG features of a perceptual loss, a teacher): its parameters get .grad, by design unused
        rest = (cand - set().union(*late.values()) if late else cand) - step.in_eval
        if rest and not all(o.complete for o in stepped):
            _never_handed(ctx, step, stepped, rest, found)
            continue
        if not rest:
            continue
        o = stepped[0]
        sources = sorted({s for g in o.groups for s in g.sources})
        built_from = f" is built from {', '.join(f'`{s}`' for s in sources)} only" if sources else " does not hold them"
        msg = (
            f"{describe(rest)} feed{'' if plural(rest) else 's'} `{step.loss}` but {'are' if plural(rest) else 'is'} "
            f"in no param group: `{o.name}`{built_from}, so {'they never train' if plural(rest) else 'it never trains'}"
        )
        # an optimizer given only tensors picked one by one (an explainer's masks, an attack's
        # perturbation, a prompt) while whole modules' parameters reach the loss: training those
        # tensors on a fixed model is as likely as a forgotten model
        picked = (
            not sources
            and all(p.kind == "param" and p.module for p in rest)
            and not any(_layer_weight(p) for p in o.params)
        )
        if picked:
            msg += "; the optimizer holds only tensors picked one by one, so leaving the model out may be deliberate"
        if o.span not in found:
            found[o.span] = RULE.finding(
                o.span,
                msg,
                params=names(rest),
                related=(Related(step.span, f"`{step.loss}.backward()`"),),
                fix=_fix_group(ctx, o, rest),
                confidence=SUSPICIOUS if picked else CONFIRMED,
            )
    for span, made, unit in ctx.model.unit_new:
        if span in found:
            continue
        found[span] = RULE.finding(
            span,
            f"{describe(made)} {'are' if plural(made) else 'is'} created each time `{unit}` runs (seen running it on "
            f"its own with inputs that require grad: no training step in the checked code reaches it): new "
            f"weights at every call, which no optimizer can hold, so they never train; build the layer or "
            f"parameter in `__init__`",
            confidence=SUSPICIOUS,
            params=names(made),
            data={"unit": unit},
        )
    out = list(found.values())
    sites: set[Span] = set()
    functions: set[int] = set()  # each function's groups are read once, for its first optimizer
    for o in ctx.model.optimizers:
        if o.span in found or o.span in sites:
            continue  # the step already proves its parameters untrained; a site built again
        sites.add(o.span)
        for group in _dropped_groups(ctx, o.span, functions):
            out.append(
                RULE.finding(
                    o.span,
                    f"the param group `{group.targets[0].id}` built at line {group.lineno} is filled with parameters "  # type: ignore[attr-defined]
                    f"but never handed to `{o.name}` (nor stored, passed on or returned): those parameters never "
                    f"train, unless another group holds them",
                    confidence=SUSPICIOUS,
                    related=(
                        Related(
                            Span(o.span.path, group.lineno, group.col_offset, group.lineno, group.col_offset),
                            "the group that is dropped",
                        ),
                    ),
                )
            )
    return out


def _dropped_groups(ctx: RuleContext, span: Span, functions: set[int]) -> list[ast.Assign]:
    """Param groups (`g = {"params": [], "lr": ...}`, or a dict given `g["params"] = ...`) bound by a
    statement of the function that builds the optimizer at `span`, and then only filled
    (`g["params"].append(p)`, `g[key] = v`) until the name is bound again or the function ends:
    the group goes nowhere (HVPNeT's NER trainer forgot `parameters.append(params)`)."""
    tree = ctx.tree(span.path)
    fn = enclosing_function(tree, span.line) if tree is not None else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(fn) in functions:
        return []
    functions.add(id(fn))
    lines = range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)
    if not any("params" in ctx.line(span.path, n) for n in lines):
        return []  # no param group is written in it (the walk below is the rule's cost on each edit)
    binds = [
        st
        for st in fn.body
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
    ]
    loads: dict[str, list[ast.Name]] = {}
    parents: dict[int, ast.AST] = {}
    for n in ast.walk(fn):
        for c in ast.iter_child_nodes(n):
            parents[id(c)] = n
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n)
    out = []
    for i, st in enumerate(binds):
        name = st.targets[0].id  # type: ignore[attr-defined]
        nxt = next((b.lineno for b in binds[i + 1 :] if b.targets[0].id == name), None)  # type: ignore[attr-defined]
        uses = [u for u in loads.get(name, ()) if u.lineno > st.end_lineno and (nxt is None or u.lineno < nxt)]  # type: ignore[operator]
        given = (
            [v for k, v in zip(st.value.keys, st.value.values) if isinstance(k, ast.Constant) and k.value == "params"]
            if isinstance(st.value, ast.Dict)
            else []
        )
        grouped = bool(given)
        filled = any(not _empty(v) for v in given)
        for u in uses:
            sub = parents.get(id(u))
            if not (isinstance(sub, ast.Subscript) and sub.value is u):
                break  # read, passed or stored: it goes somewhere
            key = sub.slice.value if isinstance(sub.slice, ast.Constant) else None
            holder = parents.get(id(sub))
            if isinstance(sub.ctx, ast.Store):
                if key == "params":
                    grouped = True
                    filled = filled or not (isinstance(holder, ast.Assign) and _empty(holder.value))
                continue
            call = parents.get(id(holder)) if isinstance(holder, ast.Attribute) else None
            if (
                key == "params"
                and isinstance(holder, ast.Attribute)
                and holder.attr in ("append", "extend", "add")
                and isinstance(call, ast.Call)
                and call.func is holder
            ):
                filled = True
                continue
            break
        else:
            if grouped and filled and isinstance(st.value, ast.Dict):
                out.append(st)
    return out


RULE = Rule(
    code="GA108",
    name="param-not-optimized",
    family=GRAPH_BREAK,
    summary="parameters reach the loss but are in no optimizer param group",
    what="""
Flags parameters that receive gradient from a loss but are in no optimizer's param groups:
the optimizer built from one submodule while another trainable one feeds the loss; a module or
`nn.Parameter` created or replaced after the optimizer was built (a new head); a module
constructed inside the training loop. Also, suspicious, a param group (`{"params": [...], "lr":
...}`) that the function building the optimizer fills and then drops: bound again or left
without being appended, passed or stored (its parameters train only if another group holds
them). Frozen parameters, target networks, fixed networks held in `eval()` (a perceptual-loss
feature extractor, a teacher) and parameters added with `add_param_group` are not flagged.
""",
    why="""
The optimizer captured its parameter list when it was built. Anything else gets `.grad`
filled on every `backward()` but is never stepped: a replaced classification head keeps its
random initialisation, a module built in the loop is re-created every iteration.
""",
    example="""
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model.fc = nn.Linear(model.fc.in_features, 3)
""",
    use_instead="""
model.fc = nn.Linear(model.fc.in_features, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
""",
    severity="high",
    premises=("step", "groups", "writes"),
    lookalike=(
        "The parameters receive gradient from the loss and no param group holds them; frozen parameters, "
        "target networks and groups added with `add_param_group` are the valid cases."
    ),
    runtime=RuntimeCheck("updates", "`updates` fails: the parameters no optimizer holds get gradient but never change"),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyNet(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.fc = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.fc(self.body(x))


torch.manual_seed(0)
model = TinyNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
model.fc = nn.Linear(32, 3)  # <- GA108
for _ in range(3):
    x, y = torch.randn(12, 16), torch.randint(0, 3, (12,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyNet(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.fc = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.fc(self.body(x))


torch.manual_seed(0)
model = TinyNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
model.fc = nn.Linear(32, 3)
optimizer.add_param_group({"params": model.fc.parameters()})
for _ in range(3):
    x, y = torch.randn(12, 16), torch.randint(0, 3, (12,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model.fc",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 12), nn.ReLU(), nn.Linear(12, 4))
        self.decoder = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 20))

    def forward(self, x):
        return self.decoder(self.encoder(x))


torch.manual_seed(1)
model = AutoEncoder()
optimizer = torch.optim.Adam(model.encoder.parameters(), lr=1e-3)  # <- GA108
for _ in range(3):
    batch = torch.randn(8, 20)
    loss = F.mse_loss(model(batch), batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 12), nn.ReLU(), nn.Linear(12, 4))
        self.decoder = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 20))

    def forward(self, x):
        return self.decoder(self.encoder(x))


torch.manual_seed(1)
model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    batch = torch.randn(8, 20)
    loss = F.mse_loss(model(batch), batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: model.decoder",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
head = nn.Linear(16, 4)
optimizer = torch.optim.Adam(list(backbone.parameters()) + list(head.parameters()), lr=1e-3)
for _ in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    adapter = nn.Linear(16, 16)  # <- GA108
    feats = backbone(x)
    loss = F.cross_entropy(head(feats + adapter(feats)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
head = nn.Linear(16, 4)
optimizer = torch.optim.Adam(list(backbone.parameters()) + list(head.parameters()), lr=1e-3)
for _ in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
    adapter = nn.Linear(16, 16)
    optimizer.add_param_group({"params": adapter.parameters()})
    feats = backbone(x)
    loss = F.cross_entropy(head(feats + adapter(feats)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="no-update: adapter",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
body = nn.Linear(12, 5)
opt = torch.optim.SGD(body.parameters(), lr=0.1)
logit_scale = nn.Parameter(torch.tensor(10.0))  # <- GA108
for _ in range(3):
    x, y = torch.randn(10, 12), torch.randint(0, 5, (10,))
    loss = F.cross_entropy(logit_scale * F.normalize(body(x), dim=-1), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
body = nn.Linear(12, 5)
opt = torch.optim.SGD(body.parameters(), lr=0.1)
logit_scale = nn.Parameter(torch.tensor(10.0))
opt.add_param_group({"params": [logit_scale]})
for _ in range(3):
    x, y = torch.randn(10, 12), torch.randint(0, 5, (10,))
    loss = F.cross_entropy(logit_scale * F.normalize(body(x), dim=-1), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="no-update: logit_scale",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(4)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 10))
model[2] = nn.Linear(16, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
gate = None
for epoch in range(3):
    if epoch == 1:
        gate = nn.Parameter(torch.ones(3))
        optimizer.add_param_group({"params": [gate], "lr": 0.1})
    x, y = torch.randn(10, 8), torch.randint(0, 3, (10,))
    logits = model(x)
    if gate is not None:
        logits = logits * gate
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="re-headed before the optimizer; a late parameter added with add_param_group",
        ),
        Example(
            """import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_optimizer(*modules, lr=2e-3):
    return torch.optim.AdamW(itertools.chain.from_iterable(m.parameters() for m in modules), lr=lr)


torch.manual_seed(5)
enc = nn.Sequential(nn.Linear(12, 6), nn.Tanh())
dec = nn.Linear(6, 12)
optimizer = make_optimizer(enc, dec)
for _ in range(3):
    batch = torch.randn(9, 12)
    loss = F.mse_loss(dec(enc(batch)), batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="trains",
            note="an optimizer factory chaining several modules",
        ),
    ),
)


def _empty(node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) and not node.elts

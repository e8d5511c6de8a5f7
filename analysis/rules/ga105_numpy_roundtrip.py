"""GA105 numpy-roundtrip."""

import ast
from collections.abc import Collection

from ..model.findings import SAFE, UNSAFE, Finding, Fix
from ..model.model import Cut, Step
from ..ops import torch_api as T
from .base import GRAPH_BREAK, Example, Rule, RuleContext, RuntimeCheck
from .common import cut_findings


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    out = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def _np_function(call: ast.Call, np_names: Collection[str]) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in np_names:
        return f.attr
    return None


def _strip_numpy(node: ast.expr) -> ast.expr | None:
    """`t.detach().cpu().numpy()` -> `t`: the tensor under the round trip, or None if `node` is not one."""
    n, hops = node, []
    while (
        isinstance(n, ast.Call)
        and not n.args
        and not n.keywords
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in T.NUMPY_HOPS
    ):
        hops.append(n.func.attr)
        n = n.func.value
    if not hops or hops[0] != "numpy":
        return None
    return n


def _fix(ctx: RuleContext, cut: Cut, step: Step) -> Fix | None:
    """`torch.from_numpy(np.log(p.detach().numpy() + 1e-8))` -> `torch.log(p + 1e-8)`: the same values
    computed in torch, with their history. Offered only when every NumPy call inside the round trip has
    a torch namesake and every array in it comes from `.numpy()` of a tensor."""
    tree = ctx.tree(cut.span.path)
    if tree is None:
        return None
    np_names = {
        a.asname or a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names if a.name == "numpy"
    }
    torch_name = ctx.alias(cut.span.path, "torch")
    target = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call) and ctx.node_span(cut.span.path, n) == cut.span), None
    )
    if target is None or not np_names:
        return None
    parents = _parents(tree)
    wrapper = parents.get(target)
    while wrapper is not None and not (
        isinstance(wrapper, ast.Call)
        and isinstance(wrapper.func, ast.Attribute)
        and wrapper.func.attr in T.FROM_NUMPY
        and isinstance(wrapper.func.value, ast.Name)
        and wrapper.func.value.id == torch_name
    ):
        if not isinstance(wrapper, (ast.BinOp, ast.UnaryOp, ast.Call)) or (
            isinstance(wrapper, ast.Call) and not _np_function(wrapper, np_names)
        ):
            return None  # the array goes somewhere else before it comes back
        wrapper = parents.get(wrapper)
    # (the loop above ends on the from_numpy call, or on None)
    if not isinstance(wrapper, ast.Call) or len(wrapper.args) != 1 or any(k.arg != "dtype" for k in wrapper.keywords):
        return None
    inner = wrapper.args[0]
    path = cut.span.path
    text = ctx.text_of_node(path, inner)
    base = inner.col_offset if inner.lineno == inner.end_lineno else None
    if base is None:
        return None
    edits = []  # (start, end, new) in the inner text's byte offsets
    arrays = 0
    for node in ast.walk(inner):
        if not isinstance(node, ast.Call):
            continue
        fn = _np_function(node, np_names)
        if fn is not None:
            if fn not in T.NUMPY_TO_TORCH or node.keywords:  # NumPy's keywords (a_min, axis, out) differ
                return None
            fn_end = node.func.end_col_offset or 0
            edits.append((node.func.col_offset - base, fn_end - base, f"{torch_name}.{T.NUMPY_TO_TORCH[fn]}"))
            continue
        under = _strip_numpy(node)
        if under is not None:
            arrays += 1
            edits.append(((under.end_col_offset or 0) - base, (node.end_col_offset or 0) - base, ""))
    # An array name left in would make `torch.log(array)` raise: the rewrite is safe when every name in
    # the round trip was a tensor under `.numpy()`, or when there is a single name, which then must be
    # the tensor carrying the gradient (the reason for the finding).
    under_numpy = {
        id(m)
        for c in ast.walk(inner)
        if isinstance(c, ast.Call) and (tensor := _strip_numpy(c)) is not None
        for m in ast.walk(tensor)
    }
    free = {
        m.id
        for m in ast.walk(inner)
        if isinstance(m, ast.Name) and id(m) not in under_numpy and m.id not in np_names and m.id != torch_name
    }
    safe = not free or (len(free) == 1 and not arrays)
    raw = text.encode()
    if len(raw) != (inner.end_col_offset or 0) - base:
        return None
    for start, end, new in sorted(edits, reverse=True):
        raw = raw[:start] + new.encode() + raw[end:]
    new_text = raw.decode()
    for k in wrapper.keywords:  # only dtype=: the cast keeps the wrapper's dtype
        atom = isinstance(ast.parse(new_text, mode="eval").body, (ast.Call, ast.Name, ast.Attribute, ast.Subscript))
        new_text = f"{new_text if atom else '(' + new_text + ')'}.to({ctx.text_of_node(path, k.value)})"
    span = ctx.node_span(path, wrapper)
    if span is None:
        return None
    return Fix(f"Compute it in torch: `{new_text}`", SAFE if safe else UNSAFE, (ctx.replace(span, new_text),))


def check(ctx: RuleContext) -> list[Finding]:
    return cut_findings(
        ctx,
        ("numpy",),
        RULE,
        lambda cut, what, step: (
            f"`{cut.detail}` leaves autograd: the values come back into torch without "
            f"history, so `{step.loss or 'the loss'}` gets no gradient to {what}"
        ),
        _fix,
    )


RULE = Rule(
    code="GA105",
    name="numpy-roundtrip",
    family=GRAPH_BREAK,
    summary="a tensor that carries gradient goes through NumPy and back into the loss",
    what="""
Flags `.numpy()` or a NumPy function applied to a tensor that carries gradient from optimized
parameters, when the result is brought back into torch and feeds the loss. Labels, data and
metrics handled in NumPy are not flagged.
""",
    why="""
NumPy arrays have no autograd history. On a tensor that requires grad, `.numpy()` raises
("Can't call numpy() on Tensor that requires grad"); with `.detach()` first, or through
`np.*` on detached data, the loss silently gets no gradient through that term.
""",
    example="""
probs = torch.softmax(model(x), dim=1)
log_probs = torch.from_numpy(np.log(probs.detach().numpy() + 1e-8))
loss = F.nll_loss(log_probs, y)
""",
    use_instead="""
log_probs = torch.log_softmax(model(x), dim=1)
loss = F.nll_loss(log_probs, y)
""",
    severity="high",
    lookalike=(
        "The array comes from a tensor that carries gradient from optimized parameters and goes back into"
        " the loss; NumPy on labels, data or logged values is the valid use."
    ),
    runtime=RuntimeCheck("into", "`into` fails: the NumPy round trip carries no gradient back to the parameters"),
    supersedes=("GA101",),
    check=check,
    invalid=(
        Example(
            """import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    probs = torch.softmax(model(x), dim=1)
    log_probs = torch.from_numpy(np.log(probs + 1e-8))  # <- GA105
    loss = F.nll_loss(log_probs, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            fixed="""import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    probs = torch.softmax(model(x), dim=1)
    log_probs = torch.log(probs + 1e-8)
    loss = F.nll_loss(log_probs, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
            runtime="error: Can't call numpy() on Tensor that requires grad",
            fixed_runtime="trains",
        ),
        Example(
            """import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(1)
body = nn.Sequential(nn.Linear(5, 16), nn.Tanh())
value_head = nn.Linear(16, 1)
policy_head = nn.Linear(16, 3)
opt = torch.optim.RMSprop([*body.parameters(), *value_head.parameters(), *policy_head.parameters()], lr=1e-3)


def value_loss(values, returns):
    v = values.detach().numpy()  # <- GA105
    return torch.tensor(np.mean((v - returns) ** 2), dtype=torch.float32)


for _ in range(3):
    obs = torch.randn(16, 5)
    returns = np.random.default_rng(0).normal(size=16).astype(np.float32)
    h = body(obs)
    dist = torch.distributions.Categorical(logits=policy_head(h))
    policy_loss = -(dist.log_prob(dist.sample()) * torch.from_numpy(returns)).mean()
    loss = policy_loss + 0.5 * value_loss(value_head(h).squeeze(-1), returns)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="no-update: value_head",
        ),
    ),
    valid=(
        Example(
            """import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(2)
features = rng.normal(size=(40, 5)).astype(np.float32)
labels = (features @ np.array([1.0, -2.0, 0.5, 0.0, 1.0]) > 0).astype(np.int64)
X, y = torch.from_numpy(features), torch.from_numpy(labels)
torch.manual_seed(2)
clf = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.Adam(clf.parameters(), lr=1e-2)
for epoch in range(3):
    logits = clf(X)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = np.mean(logits.detach().argmax(dim=1).numpy() == labels)
""",
            runtime="trains",
            note="NumPy data in, NumPy metrics out",
        ),
    ),
)

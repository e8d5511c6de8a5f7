"""GA303 history-accumulation."""

import ast
from typing import TypeGuard

from ..model.findings import CONFIRMED, SAFE, SUSPICIOUS, Finding, Fix, Related
from ..model.model import EventKind, ProgramModel, Span
from .base import BACKWARD, Example, Rule, RuleContext, RuntimeCheck
from .fixes import enclosing_function
from .lifecycle import first_by_span, statement_at


def _fix(ctx: RuleContext, span: Span) -> Fix | None:
    """`total += loss.detach()` / `history.append(loss.detach())`."""
    stmt, _ = statement_at(ctx, span)
    if isinstance(stmt, ast.AugAssign):
        value = stmt.value
    elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.BinOp):
        value = stmt.value  # `ema = 0.9 * ema + 0.1 * loss`: the new value, without its graph
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and len(stmt.value.args) == 1:
        value = stmt.value.args[0]
    else:
        return None
    if isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return None  # `rollout.append([log_prob, value])`: the tensors are its parts, the list has no detach()
    vspan = ctx.node_span(span.path, value)
    text = ctx.text(vspan)
    if vspan is None or not text:
        return None
    wrapped = (
        f"{text}.detach()"
        if isinstance(value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        else f"({text}).detach()"
    )
    return Fix("Keep the value without its graph: `.detach()`", SAFE, (ctx.replace(vspan, wrapped),))


def _update_loops(ctx: RuleContext) -> tuple[set[int], set[int]]:
    """The loop iterations that update the parameters: those around a known optimizer's `step()`
    for a loss; and, for a loss stepped by no optimizer the engine knows (an optimizer passed in, a
    manual update, a bare backward), the iterations around its backward, to be judged by their code
    (`_updates_in`). State made inside an update iteration dies with it, however many inner
    iterations fill it (a meta-batch's per-task list, the micro-steps of one accumulated update)."""
    model = ctx.model
    steps_of: dict[int, list[tuple[int, ...]]] = {}
    for e in model.events:
        if e.kind == "step":
            steps_of.setdefault(e.target_key, []).append(e.loops)
    known: set[int] = set()
    around_backward: set[int] = set()
    for s in model.steps:
        around = [loops for key in s.stepped for loops in steps_of.get(key, ())]
        if around:
            for loops in around:
                known.update(loops)
        else:
            around_backward.update(s.loops)
    return known, around_backward


def _is_step_call(node: ast.AST) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step"


def _update_calls(root: ast.AST) -> list[ast.Call]:
    """The `.step()` calls under `root` that may be an optimizer's: a statement of its own
    (`optimizer.step()`), or the closure's loss it returns given a name (`loss = opt.step(closure)`);
    not an environment's `obs, reward, done, info = env.step(action)`, whose result is unpacked, nor
    a numerical solver's `torch.tensor(self.step(func, u, t, h))`, whose result is computed with (an
    optimizer's step returns the closure's loss or None). Kept on the node: asked for each loop of
    each accumulation, and a tree is walked twice for it."""
    found = getattr(root, "_ga_update_calls", None)
    if found is None:
        alone = {
            id(n.value)
            for n in ast.walk(root)
            if isinstance(n, ast.Expr)
            or (isinstance(n, (ast.Assign, ast.AnnAssign)) and all(isinstance(t, ast.Name) for t in _targets(n)))
        }
        found = [n for n in ast.walk(root) if _is_step_call(n) and id(n) in alone]
        root._ga_update_calls = found  # type: ignore[attr-defined]
    return found


def _targets(n: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return n.targets if isinstance(n, ast.Assign) else [n.target]


def _loop_at(ctx: RuleContext, span: Span) -> ast.For | ast.While | ast.AsyncFor | None:
    tree = ctx.tree(span.path)
    if tree is None:
        return None
    for n in ast.walk(enclosing_function(tree, span.line)):
        if isinstance(n, (ast.For, ast.While, ast.AsyncFor)) and n.lineno == span.line:
            return n
    return None


def _steps_inside(ctx: RuleContext, span: Span) -> bool:
    """The loop at `span` calls `.step()` in its own body: each iteration is an update, whatever
    optimizer object the engine took it for."""
    loop = _loop_at(ctx, span)
    return loop is not None and bool(_update_calls(loop))


def _updates_in(ctx: RuleContext, span: Span) -> bool:
    """The loop at `span`, around a backward whose optimizer the engine does not know, is the
    iteration of an update unless its function calls `.step()` after it and never inside it (the
    meta-batch loop of MAML, then `optimiser.step()`)."""
    tree = ctx.tree(span.path)
    loop = _loop_at(ctx, span)
    if tree is None or loop is None:
        return True
    if _update_calls(loop):
        return True
    end = loop.end_lineno or loop.lineno
    return not any(n.lineno > end for n in _update_calls(enclosing_function(tree, span.line)))


_TRAINING_CALLS = ("backward", "step", "grad", "manual_backward")


def _evaluation_loop(ctx: RuleContext, span: Span, at: Span) -> bool:
    """The loop at `span` is in a function that trains nothing (no backward, step or
    autograd.grad anywhere in it), and the name the accumulation at `at` adds to is a local the
    function neither returns nor hands on (a total only printed or logged): what it holds with a
    graph feeds no update. A loss helper's `total += term`, returned to the caller that
    backpropagates it, is not one."""
    tree = ctx.tree(span.path)
    loop = _loop_at(ctx, span)
    if tree is None or loop is None:
        return False
    fn = enclosing_function(tree, span.line)
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == "forward" or "loss" in fn.name.lower():
        return False  # a forward's loop over time steps or scales builds what its caller uses
    if any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _TRAINING_CALLS
        for n in ast.walk(fn)
    ):
        return False
    stmt, _ = statement_at(ctx, at)
    target = stmt.target if isinstance(stmt, ast.AugAssign) else None
    if not isinstance(target, ast.Name):
        return False  # an attribute or an element: state that outlives the call
    name = target.id
    for n in ast.walk(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            if any(isinstance(m, ast.Name) and m.id == name for m in ast.walk(n.value)):
                return False
        if isinstance(n, ast.Call) and n.lineno > (loop.end_lineno or loop.lineno):
            # handed to a call after the loop (other than a print or a format): it may be backpropagated there
            func = n.func
            fname = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if fname not in ("print", "format", "info", "write", "log", "add_scalar") and any(
                isinstance(m, ast.Name) and m.id == name for a in n.args for m in ast.walk(a)
            ):
                return False
    return True


def _steps_between_resets(model: ProgramModel, keys: set) -> bool:
    """An iteration of one of the loops `keys` steps an optimizer on every run (not under a condition
    of the iteration): state reset only now and then keeps the graphs of several training steps."""
    return any(
        s.loops and s.loops[-1] in keys and any(e.kind == EventKind.STEP and not e.guarded for e in s.events)
        for s in model.steps
    )


def check(ctx: RuleContext) -> list[Finding]:
    model = ctx.model
    known, around_backward = _update_loops(ctx)
    out = []
    for acc in model.accumulations:
        if acc.backpropagated or not acc.loops:
            continue
        outlived: list[tuple[int, Span | None]] = (
            [(acc.loops[-1], None)] if acc.outlives is None else list(acc.outlives)
        )
        if acc.reset is not None and not _steps_between_resets(model, {key for key, _ in outlived}):
            # reset under a condition, and the optimizer steps only under one too (torchtune's
            # `running_loss` reset with each accumulated step): one step's micro-batches at most
            continue
        evaluation = False
        if not any(
            key in known
            or (key in around_backward and (loop is None or _updates_in(ctx, loop)))
            or (loop is not None and _steps_inside(ctx, loop))
            for key, loop in outlived
        ):
            evaluation = bool(acc.params) and any(
                loop is not None and _evaluation_loop(ctx, loop, acc.span) for key, loop in outlived
            )
            if not evaluation:
                continue
        msg = (
            "a tensor with its autograd graph is accumulated into state that outlives the iteration: every "
            "iteration's graph stays alive with it (memory grows until the loop ends); keep `.item()` or "
            "`.detach()` for logging"
            if acc.tensor
            else "a value holding a tensor with its autograd graph (backward() ran on an element of it) is "
            "accumulated into state that outlives the iteration: every iteration's graph stays alive with it "
            "(memory grows until the loop ends); replace that element with its `.detach()` or `.item()` first"
        )
        if acc.reset is not None and acc.tensor:
            msg = (
                "a tensor with its autograd graph is accumulated into state that outlives the iteration and is "
                f"reset only under a condition (line {acc.reset.line}): the graphs of every iteration between two "
                "resets stay alive with it (memory grows until the next reset); keep `.item()` or `.detach()` "
                "for logging"
            )
        if acc.keeper:
            msg = (
                f"a tensor with its autograd graph is returned from `training_step` beside the loss, and {acc.keeper} "
                f"keeps every step's output for `training_epoch_end`, detaching only the loss: every step's graph "
                f"stays alive until the epoch ends (memory grows with it); return `.detach()` or `.item()`"
            )
        # the graph is certain only when the value carries gradient from named parameters (not only
        # through code the engine could not see)
        if evaluation:
            msg = (
                "a tensor with its autograd graph is accumulated over the iterations of a loop that runs the "
                "model with gradient on and never backpropagates (an evaluation): every batch's graph stays "
                "alive until the loop ends; run it under `torch.no_grad()`, or keep `.item()`"
            )
        out.append(
            RULE.finding(
                acc.span,
                msg,
                # a framework's keeping is its documented behaviour, not code the engine saw
                confidence=CONFIRMED if acc.params and not evaluation and not acc.keeper else SUSPICIOUS,
                # a dict or an object holding the tensor has no `.detach()`
                fix=_fix(ctx, acc.span) if acc.tensor else None,
                related=(Related(acc.handed, "the training code hands the value over here"),) if acc.handed else (),
            )
        )
    return first_by_span(out)


RULE = Rule(
    code="GA303",
    name="history-accumulation",
    family=BACKWARD,
    summary="tensors with history accumulated across iterations for logging",
    what="""
Flags a tensor that carries an autograd graph accumulated, in a training loop, into state that
outlives the iteration (`total += loss`, `history.append(loss)` on a list made before the loop,
an attribute), when that accumulation never reaches a `backward()`; also a running statistic kept in
a tensor made before the iteration and written in place from its own value and such a value
(`self.running_mean[:] = self.running_mean * m + v`, `buf.copy_(buf * m + v)`,
`buf.mul_(m).add_(v)`): each write keeps the graph of the version it overwrote. Writes under
`torch.no_grad()` record nothing and are not flagged. Also, suspicious, an
evaluation loop that runs the model with gradient on (no `torch.no_grad()`) in a function that
trains nothing and sums its losses the same way. Summing losses to backpropagate them once,
`.item()` and `.detach()` are not flagged.
""",
    why="""
The accumulated tensor references every iteration's graph, so none of them is freed: memory grows
with every batch until the epoch (or training) ends, often ending in an out-of-memory error hours
in.
""",
    example="""
epoch_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    epoch_loss += loss
""",
    use_instead="""
epoch_loss = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    epoch_loss += loss.item()
""",
    severity="low",
    lookalike="Tensors with history are accumulated across iterations; `.item()`/`.detach()` values are valid.",
    runtime=RuntimeCheck(
        None,
        (
            "no runtime check of gradient flow: tensors kept with their graph grow memory (the probe's "
            "`bounded` fails only when that history also feeds the next loss)"
        ),
    ),
    check=check,
    invalid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
epoch_loss = 0.0
for it in range(4):
    x, y = torch.randn(8, 6), torch.randn(8, 2)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    epoch_loss += loss  # <- GA303
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
epoch_loss = 0.0
for it in range(4):
    x, y = torch.randn(8, 6), torch.randn(8, 2)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    epoch_loss += loss.detach()
""",
            runtime="graph-kept: epoch_loss",
        ),
        Example(
            """import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        self.history = []

    def step(self, x, y):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.history.append(loss)  # <- GA303


torch.manual_seed(1)
trainer = Trainer(nn.Linear(5, 3))
for it in range(3):
    xb = torch.randn(6, 5)
    trainer.step(xb, xb.argmax(1) % 3)
""",
            fixed="""import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        self.history = []

    def step(self, x, y):
        self.opt.zero_grad()
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.history.append(loss.detach())


torch.manual_seed(1)
trainer = Trainer(nn.Linear(5, 3))
for it in range(3):
    xb = torch.randn(6, 5)
    trainer.step(xb, xb.argmax(1) % 3)
""",
            runtime="graph-kept: trainer.history",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(4)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train(steps):
    total = torch.zeros([])
    for _ in range(steps):
        opt.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        opt.step()
        total += loss  # <- GA303
    return total


run_total = train(4)
""",
            fixed="""import torch
import torch.nn as nn

torch.manual_seed(4)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train(steps):
    total = torch.zeros([])
    for _ in range(steps):
        opt.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        opt.step()
        total += loss.detach()
    return total


run_total = train(4)
""",
            runtime="graph-kept: run_total",
            note="a counted loop that steps the optimizer is the training run: the sum grows with it",
        ),
        Example(
            """import torch
import torch.nn as nn


class Smoothed:
    def __init__(self):
        self.values, self.counts = {}, {}

    def update(self, name, value):
        if name not in self.values:
            self.values[name], self.counts[name] = value, 1
        else:
            n = self.counts[name]
            self.values[name] = (self.values[name] * n + value) / (n + 1)  # <- GA303
            self.counts[name] = n + 1


torch.manual_seed(11)
model = nn.Sequential(nn.Linear(6, 6), nn.Softmax(dim=-1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
stats = Smoothed()
ema = 0.0
for it in range(4):
    align = model(torch.randn(4, 6))
    loss = align.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    score = align.max(dim=-1)[0].mean()
    stats.update("align", score)
    ema = 0.9 * ema + 0.1 * score  # <- GA303
""",
            fixed="""import torch
import torch.nn as nn


class Smoothed:
    def __init__(self):
        self.values, self.counts = {}, {}

    def update(self, name, value):
        if name not in self.values:
            self.values[name], self.counts[name] = value, 1
        else:
            n = self.counts[name]
            self.values[name] = ((self.values[name] * n + value) / (n + 1)).detach()
            self.counts[name] = n + 1


torch.manual_seed(11)
model = nn.Sequential(nn.Linear(6, 6), nn.Softmax(dim=-1))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
stats = Smoothed()
ema = 0.0
for it in range(4):
    align = model(torch.randn(4, 6))
    loss = align.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    score = align.max(dim=-1)[0].mean()
    stats.update("align", score)
    ema = (0.9 * ema + 0.1 * score).detach()
""",
            runtime="graph-kept: ema",
            note="a running mean and an average rebuilt from their own last value each iteration, as `+=` does",
        ),
    ),
    valid=(
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(2)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
losses = []
total, correct = 0.0, 0
for it in range(3):
    x, y = torch.randn(10, 8), torch.randint(0, 2, (10,))
    opt.zero_grad()
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    total += loss.item()
    correct += (logits.argmax(1) == y).sum()
    losses.append(loss.detach())
""",
            runtime="trains",
            note="logging with .item() and .detach(); accuracy counts carry no graph",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(3)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    opt.zero_grad()
    total = 0.0
    for i in range(3):
        x = torch.randn(5, 4)
        total = total + model(x).pow(2).mean()
    total.backward()
    opt.step()
""",
            runtime="trains",
            note="losses summed to be backpropagated once",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(5)
D = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
D_opt = torch.optim.Adam(D.parameters(), lr=1e-3)


def train_step(accumulate=3):
    total = torch.zeros([])
    D_opt.zero_grad()
    for _ in range(accumulate):
        divergence = nn.functional.relu(1 + D(torch.randn(4, 6))).mean()
        (divergence / accumulate).backward()
        total += divergence
    D_opt.step()
    return float(total.item() / accumulate)


for it in range(3):
    train_step()
""",
            runtime="trains",
            note="a step's micro-batch losses summed for a log line: a local of one call, let go when it returns",
        ),
        Example(
            """import torch
import torch.nn as nn

torch.manual_seed(12)
model = nn.GRU(4, 8, batch_first=True)
head = nn.Linear(8, 1)
opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-3)
h = torch.zeros(1, 2, 8)
ema = 0.0
for it in range(4):
    out, h = model(torch.randn(2, 5, 4), h)
    loss = head(out).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    h = h.detach()
    ema = 0.9 * ema + 0.1 * loss.item()
""",
            runtime="trains",
            note="a running mean of Python numbers; the hidden state carried on is detached each step",
        ),
    ),
)

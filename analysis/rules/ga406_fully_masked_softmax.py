"""GA406 fully-masked-softmax."""

import ast

from ..model.findings import UNSAFE, Finding, Fix
from ..model.model import Risk
from .base import NUMERICAL, Example, Rule, RuleContext, RuntimeCheck
from .common import risk_findings


def _fix(ctx: RuleContext, risk: Risk) -> Fix | None:
    """`float("-inf")` -> `torch.finfo(x.dtype).min` in the masked_fill call (a fully masked row then
    gets uniform weights instead of NaN: intent decides)."""
    text = ctx.text(risk.span)
    try:
        call = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or len(call.args) != 2:
        return None
    recv = ast.get_source_segment(text, call.func.value)
    value = ast.get_source_segment(text, call.args[1])
    torch_name = ctx.alias(risk.span.path, "torch")
    new = text.replace(value, f"{torch_name}.finfo({recv}.dtype).min", 1) if value and text.count(value) == 1 else None
    return Fix("Fill with the dtype's lowest finite value", UNSAFE, (ctx.replace(risk.span, new),)) if new else None


def check(ctx: RuleContext) -> list[Finding]:
    return risk_findings(
        ctx,
        RULE,
        lambda r: (
            "positions filled with -inf and then normalised by a softmax: a row whose positions are all "
            "masked (an empty sequence, no neighbour within range) becomes exp(-inf)/0 = NaN, and NaN "
            "flows into the loss and every gradient"
        ),
        _fix,
    )


RULE = Rule(
    code="GA406",
    name="fully-masked-softmax",
    family=NUMERICAL,
    summary="masked_fill with -inf before a softmax over rows that can be fully masked",
    what="""
Flags `masked_fill(mask, float("-inf"))` whose result is normalised by `softmax`/`log_softmax`,
when the mask comes from the data (padding, a distance threshold): some row may be masked
entirely. A causal mask built with `triu`/`tril` (every row keeps its diagonal) and a fill with
`torch.finfo(dtype).min` are not flagged. Suspicious: whether a row is fully masked depends on the
data.
""",
    why="""
A fully masked row is all `-inf`; softmax computes `exp(-inf - (-inf))` = NaN for every element.
One empty sequence in a batch turns the whole batch's loss and gradients into NaN.
""",
    example="""
scores = scores.masked_fill(pad_mask[:, None, :], float("-inf"))
attn = torch.softmax(scores, dim=-1)
""",
    use_instead="""
scores = scores.masked_fill(pad_mask[:, None, :], torch.finfo(scores.dtype).min)
attn = torch.softmax(scores, dim=-1)
""",
    severity="high",
    lookalike="A fully masked row makes softmax non-finite.",
    runtime=RuntimeCheck.nonfinite("a row whose every position is masked"),
    check=check,
    invalid=(
        Example(
            """import math

import torch
import torch.nn as nn

torch.manual_seed(0)
emb = nn.Embedding(40, 16, padding_idx=0)
qkv = nn.Linear(16, 48)
cls = nn.Linear(16, 2)
opt = torch.optim.AdamW([*emb.parameters(), *qkv.parameters(), *cls.parameters()], lr=1e-3)
lengths = torch.tensor([5, 2, 0, 4])
tokens = torch.randint(1, 40, (4, 6))
pad = torch.arange(6)[None, :] >= lengths[:, None]
tokens[pad] = 0
labels = torch.tensor([1, 0, 0, 1])
for step in range(3):
    q, k, v = qkv(emb(tokens)).chunk(3, dim=-1)
    scores = q @ k.transpose(1, 2) / math.sqrt(16)
    scores = scores.masked_fill(pad[:, None, :], float("-inf"))  # <- GA406
    h = torch.softmax(scores, dim=-1) @ v
    loss = nn.functional.cross_entropy(cls(h.mean(1)), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            fixed="""import math

import torch
import torch.nn as nn

torch.manual_seed(0)
emb = nn.Embedding(40, 16, padding_idx=0)
qkv = nn.Linear(16, 48)
cls = nn.Linear(16, 2)
opt = torch.optim.AdamW([*emb.parameters(), *qkv.parameters(), *cls.parameters()], lr=1e-3)
lengths = torch.tensor([5, 2, 0, 4])
tokens = torch.randint(1, 40, (4, 6))
pad = torch.arange(6)[None, :] >= lengths[:, None]
tokens[pad] = 0
labels = torch.tensor([1, 0, 0, 1])
for step in range(3):
    q, k, v = qkv(emb(tokens)).chunk(3, dim=-1)
    scores = q @ k.transpose(1, 2) / math.sqrt(16)
    scores = scores.masked_fill(pad[:, None, :], torch.finfo(scores.dtype).min)
    h = torch.softmax(scores, dim=-1) @ v
    loss = nn.functional.cross_entropy(cls(h.mean(1)), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="nonfinite",
            note="the third sequence is empty",
        ),
    ),
    valid=(
        Example(
            """import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalBlock(nn.Module):
    def __init__(self, d=16, T=8):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.register_buffer("future", torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.future[:T, :T], float("-inf"))
        return x + self.proj(F.softmax(att, dim=-1) @ v)


torch.manual_seed(1)
emb, block, head = nn.Embedding(30, 16), CausalBlock(), nn.Linear(16, 30)
opt = torch.optim.AdamW([*emb.parameters(), *block.parameters(), *head.parameters()], lr=3e-3)
seq = torch.randint(0, 30, (4, 9))
for it in range(3):
    logits = head(block(emb(seq[:, :-1])))
    loss = F.cross_entropy(logits.reshape(-1, 30), seq[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
            runtime="trains",
            note="a causal mask keeps the diagonal in every row",
        ),
    ),
)

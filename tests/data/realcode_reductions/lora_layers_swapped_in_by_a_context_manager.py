# reduction-of: lit-llama@2a464de2a1d2 lit_llama/lora.py:345 GA107
# false: GA107
"""LoRA the lit-llama way: a `@contextmanager` swaps the attention class for a LoRA variant while
the model is built (`with lora(r=2): model = Model(4)`), the LoRA layer extends nn.Linear and calls
`nn.Linear.__init__(self, ...)` by name, and a freeze loop spares the parameters named `lora_`.

False finding: GA107 confirmed at the freeze ("frozen here and never unfrozen, yet `optimizer` is
given them as all it optimizes"): the engine ran the context manager's body at the call (swap and
restore at once), so it built the plain attention and saw no LoRA parameter, though `lora_a` and
`lora_b` are in `model.parameters()`, still require grad and train.

Verified with torch 2.13 (CPU): the model holds LoRA attention, lora_b changes, the frozen weights
do not. Prints OK.
"""
from contextlib import contextmanager

import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        return self.proj(x)


class MergedLinear(nn.Linear):
    def __init__(self, d, r):
        nn.Linear.__init__(self, d, d, bias=False)
        self.lora_a = nn.Parameter(torch.randn(r, d) * 0.1)
        self.lora_b = nn.Parameter(torch.zeros(d, r))

    def forward(self, x):
        return nn.functional.linear(x, self.weight) + x @ self.lora_a.T @ self.lora_b.T


class LoRAAttention(Attention):
    rank = 0

    def __init__(self, d):
        nn.Module.__init__(self)
        self.proj = MergedLinear(d, self.rank)


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = Attention(d)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.attn(x))


@contextmanager
def lora(r):
    global Attention
    LoRAAttention.rank = r
    original = Attention
    Attention = LoRAAttention
    yield
    Attention = original


def mark_only_lora_as_trainable(model):
    for n, p in model.named_parameters():
        if "lora_" not in n:
            p.requires_grad = False


torch.manual_seed(0)
with lora(r=2):
    model = Model(4)
assert isinstance(model.attn, LoRAAttention)
mark_only_lora_as_trainable(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
before_b, before_w = model.attn.proj.lora_b.detach().clone(), model.attn.proj.weight.detach().clone()
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
assert not torch.equal(before_b, model.attn.proj.lora_b)
assert torch.equal(before_w, model.attn.proj.weight)
print("OK")

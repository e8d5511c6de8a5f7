# runtime: trains
# confidence: suspicious
"""A small causal transformer trained as nanoGPT did before its fix: gradients are accumulated
over `grad_accum` micro-batches in an inner loop and the optimizer steps once after it, but the
loss is never divided by `grad_accum`, so each step is grad_accum times the mean gradient. The
attention scores are scaled by `1 / sqrt(head_dim)` and the logits by a temperature inside the
model; those scales are not the loss's, and the hand-written head loss is not either."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).split(x.size(-1), dim=-1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.tril(torch.ones(x.size(1), x.size(1), dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        return x + self.proj(att @ v)


class TinyLM(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.attn = Attention(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx, targets):
        logits = self.head(self.attn(self.emb(idx))) / 0.9
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


torch.manual_seed(0)
model = TinyLM()
value = nn.Linear(16, 1)
optimizer = torch.optim.AdamW([*model.parameters(), *value.parameters()], lr=1e-3)
grad_accum = 4
for it in range(3):
    for micro_step in range(grad_accum):
        idx = torch.randint(0, 20, (2, 6))
        logits, loss = model(idx, torch.roll(idx, -1, 1))
        loss.backward()  # <- GA205
    for micro_step in range(grad_accum):
        h = model.attn(model.emb(torch.randint(0, 20, (2, 6))))
        aux = ((value(h) - 1.0) ** 2).mean()
        aux.backward()  # <- GA205
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)

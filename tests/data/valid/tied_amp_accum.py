# runtime: trains
"""A tied-embedding language model with bfloat16 autocast, gradient accumulation and clipping."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.embed.weight

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + torch.tanh(self.mix(h))
        return self.out(self.norm(h))


torch.manual_seed(5)
model = TinyLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accum = 2
optimizer.zero_grad()
for i in range(6):
    tokens = torch.randint(0, 50, (4, 9))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.float().reshape(-1, 50), tokens[:, 1:].reshape(-1)) / accum
    loss.backward()
    if (i + 1) % accum == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()

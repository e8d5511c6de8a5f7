# runtime: trains
"""A one-layer causal self-attention language model: the causal mask (triu) is filled with -inf,
every row keeps its diagonal, and log_softmax feeds nll_loss."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalLM(nn.Module):
    def __init__(self, vocab=16, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.emb(tokens)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        T = tokens.size(1)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        att = att.masked_fill(mask, float("-inf"))
        x = x + torch.softmax(att, dim=-1) @ v
        return F.log_softmax(self.head(x), dim=-1)


torch.manual_seed(0)
model = CausalLM()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(3):
    tokens = torch.randint(0, 16, (4, 10))
    logp = model(tokens[:, :-1])
    loss = F.nll_loss(logp.reshape(-1, 16), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()

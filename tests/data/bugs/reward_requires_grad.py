# runtime: no-update: policy
"""Sequence-level reward training where the loss is built from sampled tokens' rewards only; it
had no graph, so requires_grad was switched on to make backward() run, and nothing trains."""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class TokenPolicy(nn.Module):
    def __init__(self, vocab=6, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, prev):
        return self.out(self.emb(prev))


def reward_fn(tokens):
    return (tokens == 3).float().mean(dim=1)


torch.manual_seed(0)
policy = TokenPolicy()
opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
for it in range(3):
    prev = torch.zeros(8, dtype=torch.long)
    seq = []
    for t in range(5):
        prev = Categorical(logits=policy(prev)).sample()
        seq.append(prev)
    reward = reward_fn(torch.stack(seq, dim=1))
    loss = -reward.mean()
    loss.requires_grad_(True)  # <- GA106
    opt.zero_grad()
    loss.backward()
    opt.step()

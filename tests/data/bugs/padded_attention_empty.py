# runtime: nonfinite
# confidence: suspicious
"""Attention pooling over padded token sequences with -inf on padding: a sequence with no tokens
(an empty document in the batch) has every position masked and its softmax is NaN."""
import torch
import torch.nn as nn


class Pooler(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.score = nn.Linear(dim, 1)
        self.cls = nn.Linear(dim, 2)

    def forward(self, tokens):
        h = self.emb(tokens)
        s = self.score(h).squeeze(-1)
        s = s.masked_fill(tokens == 0, float("-inf"))  # <- GA406
        w = torch.softmax(s, dim=1)
        return self.cls((w.unsqueeze(-1) * h).sum(1))


torch.manual_seed(0)
model = Pooler()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
docs = [[3, 5, 7], [2], [], [4, 4, 9, 1]]
tokens = torch.zeros(len(docs), 4, dtype=torch.long)
for i, d in enumerate(docs):
    tokens[i, :len(d)] = torch.tensor(d, dtype=torch.long)
labels = torch.tensor([0, 1, 0, 1])
for step in range(2):
    loss = nn.functional.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

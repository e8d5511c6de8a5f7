# runtime: trains
"""Truncated BPTT on a GRU language model: the hidden state is carried across chunks and detached
at each chunk boundary."""
import torch
import torch.nn as nn


class LM(nn.Module):
    def __init__(self, vocab=16, hidden=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        out, h = self.gru(self.emb(x), h)
        return self.head(out), h


torch.manual_seed(0)
model = LM()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
stream = torch.randint(0, 16, (2, 41))
hidden = None
for start in range(0, 40, 10):
    x, y = stream[:, start:start + 10], stream[:, start + 1:start + 11]
    if hidden is not None:
        hidden = hidden.detach()
    logits, hidden = model(x, hidden)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 16), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()

# reduction-of: pytorch-examples@77f55b912142 word_language_model/main.py:184 GA301
# false: GA301
"""Truncated BPTT with an LSTM whose carried (h, c) state is detached by a recursive `repackage_hidden`.

The real code (word language model): before each batch, `hidden = repackage_hidden(hidden)`, where
`repackage_hidden(h)` returns `h.detach()` for a tensor and `tuple(repackage_hidden(v) for v in h)`
otherwise; then `output, hidden = model(data, hidden)` and `loss.backward()`.

False finding: GA301 confirmed at `output, hidden = model(data, hidden)`: "carries a tensor with the
previous iteration's graph into `loss`; that graph was freed". The state is detached at the iteration
boundary: the recursion reaches each tensor of the tuple and returns its `.detach()`.

Verified with torch 2.13 (CPU): after repackaging, both state tensors have no grad_fn; four
iterations run without "backward through the graph a second time" and the model changes in each.
Prints OK.
"""
import torch
import torch.nn as nn


class LM(nn.Module):
    def __init__(self, ntoken=20, nhid=8):
        super().__init__()
        self.emb = nn.Embedding(ntoken, nhid)
        self.rnn = nn.LSTM(nhid, nhid)
        self.out = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, x, hidden):
        y, hidden = self.rnn(self.emb(x), hidden)
        return self.out(y), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(1, bsz, self.nhid), w.new_zeros(1, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


torch.manual_seed(0)
model = LM()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randint(0, 20, (41, 2))
hidden = model.init_hidden(2)
for i in range(0, 40, 10):
    x, y = data[i:i + 10], data[i + 1:i + 11]
    optimizer.zero_grad()
    hidden = repackage_hidden(hidden)
    assert all(h.grad_fn is None for h in hidden)
    output, hidden = model(x, hidden)
    loss = criterion(output.view(-1, 20), y.reshape(-1))
    before = [p.detach().clone() for p in model.parameters()]
    loss.backward()
    optimizer.step()
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
print("OK")

# reduction-of: awd-lstm-lm@1d466ec58756 model.py:99 GA101
# false: GA101
# quiet: GA101
"""A language model whose recurrent layers sit behind a wrapper the engine cannot read (a
weight-dropping module from a package that is not installed), and whose `init_hidden` allocates the
zero states from the first parameter: `weight = next(self.parameters()).data`, then
`weight.new(1, bsz, nhid).zero_()`, the legacy constructor that takes only dtype and device from
`weight`.

False finding: GA101 suspicious at the `.data`: "cuts gradient to the parameters of `model.rnns`:
they reach `loss` by no other path". No value of the parameter reaches the hidden state (`new`
makes a fresh tensor, like `new_zeros`), so nothing is cut; the recurrent layers train through
their own forward. Verified with torch: every parameter gets a gradient and changes.
"""
import sys

import torch
import torch.nn as nn


class WeightDropStandIn(nn.Module):
    """Stands for the wrapper the engine could not read: it runs the wrapped recurrent layer."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args):
        return self.module(*args)


# looked up at run time: the engine does not see which class this is, as with an uninstalled package
WeightDrop = vars(sys.modules[__name__])["WeightDropStandIn"]


class LM(nn.Module):
    def __init__(self, ntoken=20, ninp=8, nhid=16):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnns = nn.ModuleList([WeightDrop(nn.LSTM(ninp, nhid)), WeightDrop(nn.LSTM(nhid, nhid))])
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, tokens, hidden):
        out = self.encoder(tokens)
        new_hidden = []
        for layer, rnn in enumerate(self.rnns):
            out, h = rnn(out, hidden[layer])
            new_hidden.append(h)
        return self.decoder(out), new_hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        return [(weight.new(1, bsz, self.nhid).zero_(), weight.new(1, bsz, self.nhid).zero_()) for _ in self.rnns]


torch.manual_seed(0)
model = LM()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
before = [p.detach().clone() for p in model.parameters()]
for step in range(3):
    hidden = model.init_hidden(4)
    tokens = torch.randint(0, 20, (6, 4))
    targets = torch.randint(0, 20, (6 * 4,))
    logits, hidden = model(tokens, hidden)
    loss = nn.functional.cross_entropy(logits.view(-1, 20), targets)
    optimizer.zero_grad()
    loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
    optimizer.step()
assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
print("OK")

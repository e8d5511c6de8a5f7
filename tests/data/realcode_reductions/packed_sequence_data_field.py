# reduction-of: torchMoji@63c12319a9c5 torchmoji/model_def.py:226 GA101
# false: GA101
# quiet: GA101
"""A model that embeds the packed tokens of a PackedSequence and joins the packed outputs of two
recurrent layers by reading each PackedSequence's `.data` field.

The real code (torchMoji model_def.py and lstm.py): `packed_input = pack_padded_sequence(...)`,
`x = self.embed(packed_input.data)`, `packed_input = PackedSequence(x, packed_input.batch_sizes)`,
then `PackedSequence(torch.cat((lstm_1_output.data, lstm_0_output.data, packed_input.data), dim=1),
packed_input.batch_sizes)` before `pad_packed_sequence(...)` and attention.

False finding: GA101 at each `.data` read of a recurrent layer's output, "`.data` cuts gradient to
the parameters of `model.lstm_0`: they reach `loss` by no other path" (confirmed on this
reduction). A PackedSequence is a named tuple: its `data` field is the packed tensor itself, with
its graph; only `Tensor.data` is a cut.

Verified with torch 2.13 (CPU): every parameter (embedding, both LSTMs, the head) gets a nonzero
gradient and the loss falls. Prints OK.
"""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.lstm_0 = nn.LSTM(8, 8, batch_first=True)
        self.lstm_1 = nn.LSTM(8, 8, batch_first=True)
        self.out = nn.Linear(24, 2)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True)
        packed = PackedSequence(torch.tanh(self.embed(packed.data)), packed.batch_sizes)
        o0, _ = self.lstm_0(packed)
        o1, _ = self.lstm_1(o0)
        both = PackedSequence(torch.cat((o1.data, o0.data, packed.data), dim=1), packed.batch_sizes)
        seqs, _ = pad_packed_sequence(both, batch_first=True)
        return self.out(seqs.sum(1))


torch.manual_seed(0)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x = torch.randint(1, 20, (3, 5))
lengths = torch.tensor([5, 4, 2])
y = torch.tensor([0, 1, 0])
first = None
for _ in range(5):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x, lengths), y)
    loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in net.parameters())
    opt.step()
    first = loss.item() if first is None else first
assert loss.item() < first
print("OK")

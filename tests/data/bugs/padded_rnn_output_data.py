# runtime: no-update: net.enc
"""The recurrent encoder's padded output is read through `Tensor.data` before the head: unlike the
`.data` field of a PackedSequence, that is a cut, and the encoder never trains."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.enc = nn.LSTM(8, 8, batch_first=True)
        self.out = nn.Linear(16, 2)

    def forward(self, x, lengths):
        emb = self.embed(x)
        packed = pack_padded_sequence(emb, lengths, batch_first=True)
        o, _ = self.enc(packed)
        seqs, _ = pad_packed_sequence(o, batch_first=True)
        feats = seqs.data  # <- GA101
        return self.out(torch.cat((feats.sum(1), emb.sum(1)), dim=1))


torch.manual_seed(0)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x = torch.randint(1, 20, (3, 5))
lengths = torch.tensor([5, 4, 2])
y = torch.tensor([0, 1, 0])
for _ in range(3):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(net(x, lengths), y)
    loss.backward()
    opt.step()

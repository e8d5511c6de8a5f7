# runtime: trains
"""A masked LSTM encoder whose padding positions are zeroed out of place (`o = o.masked_fill(...)`),
a new tensor: the output the LSTM kept for backward is untouched. The final hidden state, which
the kernel does not keep, is scaled in place."""
import torch
import torch.nn as nn


class MaskedLSTM(nn.Module):
    def __init__(self, in_dim, hidden_dim):
        super().__init__()
        self.lstm = nn.LSTM(in_dim, hidden_dim, batch_first=True)

    def forward(self, x, lens):
        mask = torch.arange(x.size(1)).unsqueeze(0) < lens.unsqueeze(1)
        o, (h, c) = self.lstm(x)
        o = o.masked_fill(~mask.unsqueeze(-1), 0)
        h.mul_(0.5)
        return o, h[-1]


torch.manual_seed(0)
rnn, head = MaskedLSTM(4, 8), nn.Linear(8, 2)
opt = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=1e-3)
for _ in range(3):
    x, lens, y = torch.randn(16, 6, 4), torch.randint(1, 7, (16,)), torch.randint(0, 2, (16,))
    o, h = rnn(x, lens)
    loss = nn.functional.cross_entropy(head(o.sum(1)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

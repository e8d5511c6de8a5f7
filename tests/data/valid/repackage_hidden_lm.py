# runtime: trains
"""Truncated BPTT with an LSTM whose (h, c) state is detached by a recursive helper."""
import torch
import torch.nn as nn


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


torch.manual_seed(2)
lstm = nn.LSTM(5, 8, batch_first=True)
head = nn.Linear(8, 5)
optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
stream = torch.randn(2, 40, 5)
hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
for start in range(0, 40, 10):
    x = stream[:, start:start + 10]
    optimizer.zero_grad()
    hidden = repackage_hidden(hidden)
    out, hidden = lstm(x, hidden)
    loss = nn.functional.mse_loss(head(out), x)
    loss.backward()
    optimizer.step()

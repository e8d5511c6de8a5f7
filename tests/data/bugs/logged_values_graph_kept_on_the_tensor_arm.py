# runtime: graph-kept: history
"""The log of valid/logged_values_narrowed_by_isinstance.py, with the tensor arm adding the loss as it
is: the numbers are told apart, but each iteration's graph stays alive in `history`."""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
history = {}
for it in range(6):
    loss = net(torch.randn(8, 4)).pow(2).mean()
    stats = {"loss": loss, "lr": 0.1}
    opt.zero_grad()
    loss.backward()
    opt.step()
    for name, value in stats.items():
        kept = value if isinstance(value, float) else value * 1.0
        history[name] = history.get(name, 0) + kept  # <- GA303

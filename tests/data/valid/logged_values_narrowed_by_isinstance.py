# runtime: trains
"""A trainer's losses dict holds tensors and plain numbers (a learning rate, a weight); the log keeps
each tensor detached and each number as it is, told apart by isinstance(): no graph is kept."""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
history = {}
totals = {}
for it in range(6):
    loss = net(torch.randn(8, 4)).pow(2).mean()
    stats = {"loss": loss, "lr": 0.1, "scale": 1}
    opt.zero_grad()
    loss.backward()
    opt.step()
    for name, value in stats.items():
        kept = value if isinstance(value, (int, float)) else value.detach()
        history[name] = history.get(name, 0) + kept
        if not isinstance(value, float):
            value = value.detach() if torch.is_tensor(value) else value
        totals[name] = totals.get(name, 0) + value

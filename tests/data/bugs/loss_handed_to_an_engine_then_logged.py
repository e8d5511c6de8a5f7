# runtime: graph-kept: running
"""A training engine's `backward(loss)` (as accelerate's or DeepSpeed's) on a loss whose model the
engine cannot see (a class made at run time), then the loss summed for logging as a tensor: every
step's graph stays alive until the epoch ends. That backward() ran on it says it has a graph."""
import torch
import torch.nn as nn


class Engine:
    def backward(self, loss):
        loss.backward()


torch.manual_seed(0)
Net = type("Net", (nn.Module,), {"forward": lambda self, x: self.fc(x).pow(2).mean()})
net = Net()
net.fc = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
engine = Engine()
running = 0.0
for step in range(5):
    loss = net(torch.randn(3, 4))
    opt.zero_grad()
    engine.backward(loss)
    opt.step()
    running += loss  # <- GA303
print(running.item())

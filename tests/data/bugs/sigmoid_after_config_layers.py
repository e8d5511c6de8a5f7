# runtime: trains
# confidence: confirmed
"""A config-driven learner (`forward` runs the op each `(name, args)` entry selects) whose
`forward` ends with a sigmoid after the walk, whatever the configuration: every path gives
probabilities, and `F.cross_entropy` takes them as logits. Its twin in the real-code reductions,
where the sigmoid is one arm of the dispatch among others that give logits, is quiet."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.vars = nn.ParameterList()
        for name, param in self.config:
            if name == "linear":
                self.vars.append(nn.Parameter(torch.randn(*param) * 0.3))
                self.vars.append(nn.Parameter(torch.zeros(param[0])))

    def forward(self, x):
        idx = 0
        for name, _ in self.config:
            if name == "linear":
                x = F.linear(x, self.vars[idx], self.vars[idx + 1])
                idx += 2
            elif name == "relu":
                x = F.relu(x)
        return torch.sigmoid(x)


torch.manual_seed(0)
net = Learner([("linear", [16, 8]), ("relu", [True]), ("linear", [4, 16])])
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x = torch.randn(32, 8)
y = torch.randint(0, 4, (32,))
for _ in range(20):
    loss = F.cross_entropy(net(x), y)  # <- GA407
    opt.zero_grad()
    loss.backward()
    opt.step()

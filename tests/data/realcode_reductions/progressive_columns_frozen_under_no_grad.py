# reduction-of: mammoth@e75a491c69fd backbone/MNISTMLP_PNN.py:98 GA102
# false: GA102
"""A progressive neural network: for a new task, a new column is built next to copies of the old
columns, whose weights are handed over from the previous networks (`old_fc.load_state_dict(
col.fc.state_dict())`); the forward runs the old columns under `torch.no_grad()` and feeds their
features through trained adaptors into the new column, and the optimizer is built over the whole
network's parameters.

False finding: GA102 confirmed at the `no_grad`, "the parameters of `self.net` get no gradient, so
`opt` never changes them". The old columns are frozen by design: their weights are the previous
tasks' networks, copied in, and the `no_grad` is how they stay fixed (an optimizer skips parameters
without a gradient). Parameters of a module given its weights by another module (Param.origin
"loaded", as a target network synced from the online one) are no longer counted as cut off by a
stop-gradient.

Verified with torch 2.13 (CPU): after 20 steps the old columns are unchanged and the new column,
adaptor and classifier have changed. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Column(nn.Module):
    def __init__(self, old_cols=()):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.classifier = nn.Linear(16, 3)
        self.old_fc1s = nn.ModuleList()
        self.adaptor = nn.Linear(16 * max(len(old_cols), 1), 16)
        for old_col in old_cols:
            self.old_fc1s.append(nn.Sequential(nn.Linear(8, 16), nn.ReLU()))
            self.old_fc1s[-1][0].load_state_dict(old_col.fc1.state_dict())

    def forward(self, x):
        if len(self.old_fc1s) > 0:
            with torch.no_grad():
                kb = [old(x) for old in self.old_fc1s]
            h = F.relu(self.fc1(x) + self.adaptor(torch.cat(kb, 1)))
        else:
            h = F.relu(self.fc1(x))
        return self.classifier(h)


torch.manual_seed(0)
first = Column()
net = Column([first])
opt = torch.optim.SGD(net.parameters(), lr=0.1)
before = {n: p.detach().clone() for n, p in net.named_parameters()}
for it in range(20):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    opt.zero_grad()
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
for n, p in net.named_parameters():
    changed = not torch.equal(p, before[n])
    assert changed != n.startswith("old_fc1s"), n
print("OK")

# reduction-of: ogb@61e9784ca76e examples/nodeproppred/products/gnn.py:152 GA206
# false: GA206
"""Independent runs of a graph network whose layers come from a library the engine cannot read
(torch_geometric's SAGEConv): each run calls `model.reset_parameters()`, which resets every layer,
then builds a fresh Adam that the epoch loop inside the run steps.

False finding: GA206 confirmed at the optimizer: "built anew in every iteration of the training
loop". The layers appended to the ModuleList were values the engine could not see, and it dropped
them: the model seemed to have no parameters at all, so an optimizer over "nothing" looked fully
known and rebuilt each run. A container given a layer the engine cannot see now holds parameters it
cannot name, and an optimizer over them is not known exactly.

Here the layer class is looked up by a computed name, so the engine cannot see it either.

Verified with torch 2.13 (CPU): within a run Adam's step count grows with every epoch (its state is kept
across the run's steps), and each run starts from re-initialised weights. Prints OK.
"""
import importlib

import torch
import torch.nn.functional as F

Layer = getattr(importlib.import_module("torch.nn"), "Lin" + "ear")  # stands in for SAGEConv


class Net(torch.nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for a, b in zip(sizes[:-1], sizes[1:]):
            self.convs.append(Layer(a, b))

    def reset_parameters(self):
        for conv in self.convs:
            conv.reset_parameters()

    def forward(self, x):
        for conv in self.convs[:-1]:
            x = F.relu(conv(x))
        return F.log_softmax(self.convs[-1](x), dim=-1)


torch.manual_seed(0)
x, y = torch.randn(32, 6), torch.randint(0, 3, (32,))
model = Net([6, 16, 3])
firsts = []
for run in range(2):
    model.reset_parameters()
    firsts.append(model.convs[0].weight.detach().clone())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(4):
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
    assert optimizer.state[model.convs[0].weight]["step"].item() == 4  # kept across the run's epochs
assert not torch.equal(firsts[0], firsts[1])  # each run starts afresh
print("OK")

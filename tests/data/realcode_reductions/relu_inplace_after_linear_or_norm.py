# reduction-of: ogb@61e9784ca76e examples/lsc/mag240m/mlp.py:43 GA110
# false: GA110
"""An MLP that zips its hidden Linear layers with a list of norms (`BatchNorm1d`, or `Identity`
when batch norm is off) and applies an in-place ReLU either after the norm
(`x = norm(x).relu_()`) or before it (`x = norm(x.relu_())`), then dropout.

The real code (OGB's MAG240M MLP, shared by its SGC, SIGN and correct-and-smooth scripts) chooses
the norm and the ReLU position with constructor flags and trains the model with Adam on
cross-entropy.

False finding: GA110 confirmed at `x = batch_norm(x).relu_()`: "in-place change of a tensor that
`linear` saved for backward". Neither producer keeps its output for backward: linear (addmm)
saves its input and weight, batch norm its input and statistics, Identity returns the Linear
output itself. `relu_` saves its own result, and nothing changes that afterwards. So backward runs
with every combination of the flags.

Verified with torch 2.13 (CPU): for each of batch norm on/off, ReLU after/before the norm and
dropout on/off, backward runs without the "modified by an inplace operation" error, every layer
gets a gradient and the first layer changes. Prints OK.
"""
import torch
import torch.nn.functional as F
from torch.nn import BatchNorm1d, Identity, Linear, ModuleList


class MLP(torch.nn.Module):
    def __init__(self, batch_norm=True, relu_last=False, dropout=0.5, num_layers=3):
        super().__init__()
        sizes = [6] + [8] * (num_layers - 1) + [3]
        self.lins = ModuleList([Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.batch_norms = ModuleList([BatchNorm1d(8) if batch_norm else Identity() for _ in range(num_layers - 1)])
        self.dropout = dropout
        self.relu_last = relu_last

    def forward(self, x):
        for lin, batch_norm in zip(self.lins[:-1], self.batch_norms):
            x = lin(x)
            if self.relu_last:
                x = batch_norm(x).relu_()
            else:
                x = batch_norm(x.relu_())
            x = F.dropout(x, p=self.dropout, training=self.training)
        return self.lins[-1](x)


torch.manual_seed(0)
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
for batch_norm in (True, False):
    for relu_last in (True, False):
        for p in (0.5, 0.0):
            model = MLP(batch_norm, relu_last, p)
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
            before = model.lins[0].weight.detach().clone()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            assert all(lin.weight.grad is not None for lin in model.lins)
            optimizer.step()
            assert not torch.equal(before, model.lins[0].weight)
print("OK")

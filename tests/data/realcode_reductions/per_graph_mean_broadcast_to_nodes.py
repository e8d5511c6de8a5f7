# reduction-of: GraphMAE@b14f080c9192 graphmae/utils.py:266 GA402
# false: GA402
# quiet: GA402
"""A graph normalization (GraphMAE's, as DGL's GraphNorm): per-graph means and variances of node
features, made with `zeros(g, d).scatter_add_(0, index, h)` where `index =
arange(g).repeat_interleave(counts)`, divided by the node counts, and broadcast back to the nodes
with `repeat_interleave(counts, dim=0)`. The same for line 273 (the variance).

False finding: GA402 suspicious at both divisions by `counts`: "division by a value that can be
exactly 0". An empty graph (count 0) does make a 0 / 0 = NaN row, but only its own row: the
broadcast repeats each row its graph's count of times, so the NaN row is repeated zero times and
never reaches a node; and backward's NaN (0 / 0 in that row) is never gathered back to a node, since
the scatter's index names only the groups that have nodes. The NaN neither reaches the loss nor
any gradient. A per-graph readout that keeps the NaN row is still flagged
(tests/data/bugs/graph_mean_readout_empty_graph.py).

Verified with torch 2.13 (CPU): batches with empty graphs give a finite loss and finite gradients
for every parameter, and the model trains. Prints OK.
"""
import torch
import torch.nn as nn


class GraphNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.mean_scale = nn.Parameter(torch.ones(dim))

    def forward(self, counts, x):
        batch_size = len(counts)
        batch_list = torch.Tensor(counts).long()
        batch_index = torch.arange(batch_size).repeat_interleave(batch_list)
        batch_index = batch_index.view((-1,) + (1,) * (x.dim() - 1)).expand_as(x)
        mean = torch.zeros(batch_size, *x.shape[1:])
        mean = mean.scatter_add_(0, batch_index, x)
        mean = (mean.T / batch_list).T
        mean = mean.repeat_interleave(batch_list, dim=0)
        sub = x - mean * self.mean_scale
        std = torch.zeros(batch_size, *x.shape[1:])
        std = std.scatter_add_(0, batch_index, sub.pow(2))
        std = ((std.T / batch_list).T + 1e-6).sqrt()
        std = std.repeat_interleave(batch_list, dim=0)
        return self.weight * sub / std + self.bias


torch.manual_seed(0)
lin = nn.Linear(5, 8)
norm = GraphNorm(8)
head = nn.Linear(8, 1)
opt = torch.optim.Adam([*lin.parameters(), *norm.parameters(), *head.parameters()], lr=1e-2)
for counts in ([3, 0, 4], [2, 2, 1], [0, 5, 0]):
    x = torch.randn(sum(counts), 5)
    h = norm(counts, lin(x))
    loss = head(h).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in opt.param_groups[0]["params"])
    opt.step()
print("OK")

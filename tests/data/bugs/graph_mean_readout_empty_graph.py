# runtime: nonfinite
# confidence: suspicious
"""A per-graph mean readout: node features summed per graph with `scatter_add_` by an index
`arange(n_graphs).repeat_interleave(counts)`, divided by the node counts. An empty graph in the
batch (count 0) gives a 0 / 0 = NaN row; the BatchNorm over graphs then mixes that row into every
other, and the loss and every gradient are NaN. (Broadcast back to the nodes with
`repeat_interleave(counts)`, as a graph normalization does, the empty graph's row is dropped: see
the reduction per_graph_mean_broadcast_to_nodes.)"""
import torch
import torch.nn as nn

torch.manual_seed(0)
embed = nn.Linear(5, 8)
norm = nn.BatchNorm1d(8)
head = nn.Linear(8, 1)
optimizer = torch.optim.Adam([*embed.parameters(), *norm.parameters(), *head.parameters()], lr=1e-2)
for counts in ([3, 2, 4], [2, 0, 3]):
    x = torch.randn(sum(counts), 5)
    target = torch.randn(len(counts), 1)
    counts_t = torch.Tensor(counts).long()
    index = torch.arange(len(counts)).repeat_interleave(counts_t)
    h = embed(x)
    sums = torch.zeros(len(counts), 8).scatter_add_(0, index[:, None].expand_as(h), h)
    pooled = sums / counts_t[:, None]  # <- GA402
    loss = nn.functional.mse_loss(head(norm(pooled)), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

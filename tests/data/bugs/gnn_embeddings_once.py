# runtime: error: Trying to backward through the graph a second time
"""Link prediction with a graph convolution: the node embeddings are computed once per epoch,
outside the loop over edge mini-batches, so the second mini-batch backpropagates through the
graph the first one freed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GCN(nn.Module):
    def __init__(self, inp, hid):
        super().__init__()
        self.lin1 = nn.Linear(inp, hid)
        self.lin2 = nn.Linear(hid, hid)

    def forward(self, feats, adj):
        h = F.relu(adj @ self.lin1(feats))
        return adj @ self.lin2(h)


def edge_batches(edges, size):
    for i in range(0, edges.size(0), size):
        yield edges[i:i + size]


torch.manual_seed(0)
n = 12
adj = torch.rand(n, n)
adj = adj / adj.sum(1, keepdim=True)
feats = torch.randn(n, 5)
edges, labels = torch.randint(0, n, (40, 2)), torch.randint(0, 2, (40,)).float()
model = GCN(5, 8)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    emb = model(feats, adj)
    for batch in edge_batches(torch.arange(40), 10):
        src, dst = edges[batch, 0], edges[batch, 1]
        score = (emb[src] * emb[dst]).sum(-1)
        loss = F.binary_cross_entropy_with_logits(score, labels[batch])
        opt.zero_grad()
        loss.backward()  # <- GA301
        opt.step()

# runtime: trains
"""Link prediction with node embeddings recomputed for every edge mini-batch (the fix of the
once-per-epoch version), with degree normalisation clamped against isolated nodes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n = 10
adj = (torch.rand(n, n) > 0.7).float()
deg = adj.sum(1, keepdim=True).clamp(min=1)
norm_adj = adj / deg
feats = torch.randn(n, 4)
lin = nn.Linear(4, 8)
opt = torch.optim.Adam(lin.parameters(), lr=1e-2)
edges, labels = torch.randint(0, n, (30, 2)), torch.randint(0, 2, (30,)).float()
for epoch in range(2):
    for i in range(0, 30, 10):
        emb = norm_adj @ lin(feats) + lin(feats)
        src, dst = edges[i:i + 10, 0], edges[i:i + 10, 1]
        loss = F.binary_cross_entropy_with_logits((emb[src] * emb[dst]).sum(-1), labels[i:i + 10])
        opt.zero_grad()
        loss.backward()
        opt.step()

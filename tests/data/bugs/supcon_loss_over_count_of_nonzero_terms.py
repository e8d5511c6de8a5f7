# runtime: nonfinite
# confidence: suspicious
"""A supervised contrastive loss (after TVDiag) averages its per-pair terms over the number of
nonzero ones, `len(torch.nonzero(terms))`. Only pairs that share a label have a nonzero term: in a
batch where every sample has a label of its own there is none, the count is 0 and the loss is
0 / 0 = NaN, and so is every gradient of the encoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
batches = [torch.tensor([0, 1, 0, 2, 1, 3]), torch.tensor([0, 1, 2, 3, 4, 5])]
for labels in batches:
    z = encoder(torch.randn(6, 8))
    sim = torch.exp(F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2) / 0.5)
    positives = (labels[:, None] == labels[None, :]).float() - torch.eye(6)
    terms = -torch.log(sim / sim.sum(1, keepdim=True)) * positives
    loss = terms.sum() / len(torch.nonzero(terms))  # <- GA402
    opt.zero_grad()
    loss.backward()
    opt.step()

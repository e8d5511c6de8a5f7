# runtime: trains
"""As bugs/supcon_loss_over_count_of_nonzero_terms.py, with the fix the project made: a count of 0
is replaced by 1 before the division (`if count == 0: count = 1`), so a batch with no positive pair
gives a loss of 0 and no gradient, not NaN."""
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
    count = len(torch.nonzero(terms))
    if count == 0:
        count = 1
    loss = terms.sum() / count
    opt.zero_grad()
    loss.backward()
    opt.step()

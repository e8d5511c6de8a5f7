# runtime: nonfinite
# confidence: suspicious
"""A logistic ranking loss written as log(1 + exp(x)) by hand: a large score gap overflows exp to
inf (here the item features are raw counts)."""
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def pairwise_logistic(pos, neg):
    return torch.log(1 + torch.exp(neg - pos)).mean()  # <- GA404


torch.manual_seed(0)
scorer = Scorer()
opt = torch.optim.Adam(scorer.parameters(), lr=1e-3)
for step in range(3):
    pos_items, neg_items = torch.rand(8, 16), 2000 * torch.rand(8, 16)   # raw, unnormalised click counts
    loss = pairwise_logistic(scorer(pos_items), scorer(neg_items))
    opt.zero_grad()
    loss.backward()
    opt.step()

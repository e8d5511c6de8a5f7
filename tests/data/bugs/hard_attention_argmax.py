# runtime: no-update: model.scorer
"""Hard attention: each sequence keeps only its highest-scoring position, chosen with argmax and
one_hot; the scorer reaches the loss only through that choice, so it never trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class HardAttnClassifier(nn.Module):
    def __init__(self, dim=8, classes=3):
        super().__init__()
        self.scorer = nn.Linear(dim, 1)
        self.value = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, x):
        scores = self.scorer(x).squeeze(-1)
        pick = F.one_hot(scores.argmax(dim=1), x.size(1)).float()  # <- GA112
        pooled = (pick.unsqueeze(-1) * self.value(x)).sum(1)
        return self.out(pooled)


torch.manual_seed(0)
model = HardAttnClassifier()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    x, y = torch.randn(6, 5, 8), torch.randint(0, 3, (6,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

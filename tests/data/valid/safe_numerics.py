# runtime: trains
"""Custom losses with their guards in place: log of clamped probabilities, normalisation with a
clamped norm, sqrt with an eps, a masked mean over a clamped count, and masked attention with the
dtype's minimum instead of -inf."""
import torch
import torch.nn as nn
import torch.nn.functional as F

EPS = 1e-6


def soft_dice(probs, target):
    inter = (probs * target).sum(dim=1)
    return 1 - (2 * inter + EPS) / (probs.sum(dim=1) + target.sum(dim=1) + EPS)


def masked_mean(values, mask):
    return (values * mask).sum() / mask.sum().clamp(min=1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(5, 8)
        self.att = nn.Linear(8, 1)
        self.cls = nn.Linear(8, 4)

    def forward(self, x, pad):
        h = torch.relu(self.enc(x))
        scores = self.att(h).squeeze(-1).masked_fill(pad, torch.finfo(h.dtype).min)
        pooled = (torch.softmax(scores, dim=1).unsqueeze(-1) * h).sum(1)
        pooled = pooled / pooled.norm(dim=1, keepdim=True).clamp_min(EPS)
        return self.cls(pooled), h


torch.manual_seed(0)
model = Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(4):
    x = torch.randn(6, 7, 5)
    pad = torch.zeros(6, 7, dtype=torch.bool)
    pad[:, 5:] = True
    y = torch.randint(0, 4, (6,))
    logits, h = model(x, pad)
    probs = torch.softmax(logits, dim=1)
    nll = -torch.log(probs.clamp_min(EPS)).gather(1, y[:, None]).mean()
    dice = soft_dice(probs, F.one_hot(y, 4).float()).mean()
    spread = torch.sqrt(h.var(dim=1) + EPS).mean()
    act = masked_mean(h.norm(dim=-1), (~pad).float())
    loss = nll + dice + 0.01 * spread + 0.01 * act
    opt.zero_grad()
    loss.backward()
    opt.step()

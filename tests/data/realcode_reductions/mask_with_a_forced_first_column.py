# reduction-of: self-critical.pytorch@4c48a3304932 captioning/modules/losses.py:35 GA402
# false: GA402
# quiet: GA402
"""Captioning losses as self-critical.pytorch writes them: the mask of the sampled words is
`(seq > 0)` shifted right by one, with a column of ones put first
(`torch.cat([mask.new(n, 1).fill_(1), mask[:, :-1]], 1)`, or `mask.new_full((n, 1), 1)`), so the
end-of-sequence token is counted. Every row keeps that first element, so `mask.sum(1)` and
`torch.sum(mask)` are at least 1, even for a sample that ends at its first word.

False finding: GA402 suspicious at each `/ mask.sum(...)` (nine in losses.py). A join along a dim
other than 0, with a part > 0 beside parts >= 0, now keeps a positive element in every row (as a
causal mask does); `new_full`, `new_ones` and `fill_` of a positive number are > 0.

Verified with torch 2.13 (CPU): a batch whose second sample is all padding; the loss and every
gradient are finite over three steps. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RewardCriterion(nn.Module):
    def forward(self, input, seq, reward):
        n, length = input.shape[:2]
        input = input.gather(2, seq.unsqueeze(2)).squeeze(2).reshape(-1)
        reward = reward.reshape(-1)
        mask = (seq > 0).to(input)
        mask = torch.cat([mask.new(mask.size(0), 1).fill_(1), mask[:, :-1]], 1).reshape(-1)
        output = -input * reward * mask
        per_row = output.view(n, length).sum(1) / mask.view(n, length).sum(1)
        return torch.sum(output) / torch.sum(mask) + per_row.mean()


def masked_mean(x, seq):
    mask = (seq > 0).float()
    mask = torch.cat((mask.new_full((mask.size(0), 1), 1), mask[:, :-1]), dim=-1)
    return (x * mask).sum(1) / mask.sum(1)


torch.manual_seed(0)
emb = nn.Embedding(10, 8)
head = nn.Linear(8, 10)
opt = torch.optim.Adam([*emb.parameters(), *head.parameters()], lr=1e-2)
crit = RewardCriterion()
seq = torch.randint(0, 10, (4, 6))
seq[1] = 0  # a sample that ends at once: only the forced first column counts
reward = torch.randn(4, 6)
for it in range(3):
    logp = F.log_softmax(head(emb(seq)), dim=-1)
    loss = crit(logp, seq, reward) + masked_mean(logp.mean(-1), seq).mean()
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in opt.param_groups[0]["params"])
    opt.step()
print("OK")

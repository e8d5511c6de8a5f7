# runtime: nonfinite
# confidence: suspicious
"""A masked mean guarded by the wrong test: the code checks that the batch is not empty, then
divides by the count of valid tokens, which is 0 for a batch of padding only: 0/0 = NaN in the
loss and every gradient. (A test of the count itself, `if count > 0:`, guards the division.)"""
import torch
import torch.nn as nn

torch.manual_seed(0)
emb = nn.Embedding(20, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*emb.parameters(), *head.parameters()], lr=0.1)
tokens = torch.zeros(4, 5, dtype=torch.long)  # padding only
for step in range(3):
    mask = (tokens != 0).float()
    count = mask.sum()
    scores = head(emb(tokens)).squeeze(-1)
    if tokens.numel() > 0:
        loss = (scores * mask).sum() / count  # <- GA402
    else:
        loss = scores.sum() * 0
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())

# runtime: nonfinite
# confidence: suspicious
"""Token embeddings normalised by hand, `e / e.norm(dim=-1)`, with an embedding whose padding row
is the zero vector (padding_idx=0): every padded position divides 0 by 0, and the loss and every
gradient turn NaN. (Without a padding row the rows are random and dense, and the division is safe.)"""
import torch
import torch.nn as nn

torch.manual_seed(0)
embedding = nn.Embedding(20, 8, padding_idx=0)
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*embedding.parameters(), *head.parameters()], lr=0.1)
tokens = torch.tensor([[3, 5, 0, 0], [7, 2, 9, 0]])
for step in range(3):
    e = embedding(tokens)
    e = e / e.norm(dim=-1, keepdim=True)  # <- GA402
    loss = head(e).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())

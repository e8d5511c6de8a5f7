# runtime: trains
"""A conditional generator normalises its class embedding by hand, `e / e.norm(dim=1)`: the rows
of an nn.Embedding without a padding row start random and dense, and the gradient of e / |e| is
orthogonal to e, so no row becomes the zero vector: the division is safe."""
import torch
import torch.nn as nn

torch.manual_seed(0)
embedding = nn.Embedding(10, 16)
fc = nn.Linear(16 + 8, 4)
opt = torch.optim.Adam([*embedding.parameters(), *fc.parameters()], lr=1e-2)
for step in range(3):
    y = torch.randint(0, 10, (5,))
    e = embedding(y)
    e = e / torch.norm(e, p=2, dim=1, keepdim=True)
    loss = fc(torch.cat([torch.randn(5, 8), e], dim=1)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

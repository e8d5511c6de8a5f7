# runtime: nonfinite
# confidence: suspicious
"""Self-attention over padded sequences with the mask applied in place: the pair mask is the
product of the query and key masks, so a padded query's whole row of scores is filled with -inf,
and the softmax of a row of -inf is NaN, which reaches the loss and every gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)

    def forward(self, x, mask):
        dots = self.to_q(x) @ self.to_k(x).transpose(-1, -2)
        input_mask = mask[:, :, None] * mask[:, None, :]
        dots.masked_fill_(~input_mask, float("-inf"))  # <- GA406
        return F.softmax(dots, dim=-1) @ x


torch.manual_seed(0)
model = Attention(8)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(2, 5, 8)
    mask = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])
    loss = model(x, mask).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

"""The same attention scaling the query out of place (`q = q * scaling`); a second layer with
separate projections scales its query in place, which is allowed (a Linear saves its input, not its
output); and an evaluation pass changes a chunk in place under torch.no_grad(), where nothing
records a graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FusedAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.in_proj = nn.Linear(dim, 3 * dim)
        self.scaling = dim**-0.5

    def forward(self, x):
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q = q * self.scaling
        return F.softmax(q @ k.transpose(-2, -1), dim=-1) @ v


class SplitAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.scaling = dim**-0.5

    def forward(self, x):
        q = self.q_proj(x)
        q *= self.scaling
        return F.softmax(q @ self.k_proj(x).transpose(-2, -1), dim=-1) @ self.v_proj(x)


torch.manual_seed(0)
model = nn.Sequential(FusedAttention(16), SplitAttention(16), nn.Linear(16, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(2, 5, 16), torch.randn(2, 5, 4)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

with torch.no_grad():
    q, k, v = model[0].in_proj(torch.randn(2, 5, 16)).chunk(3, dim=-1)
    q *= model[0].scaling

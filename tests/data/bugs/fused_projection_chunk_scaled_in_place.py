# runtime: error: This view is the output of a function that returns multiple views
"""Self-attention with a fused query/key/value projection (after fairseq's older attention code):
the projection's output is cut with `chunk(3)` and the query is scaled in place. A view that a
multi-output op returned may not be changed in place while it requires grad: torch raises at the
`*=` (since 1.8) in the first training step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.in_proj = nn.Linear(dim, 3 * dim)
        self.out_proj = nn.Linear(dim, dim)
        self.scaling = dim**-0.5

    def forward(self, x):
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q *= self.scaling  # <- GA110
        attn = F.softmax(q @ k.transpose(-2, -1), dim=-1)
        return self.out_proj(attn @ v)


torch.manual_seed(0)
model = nn.Sequential(SelfAttention(16), nn.Linear(16, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(2, 5, 16), torch.randn(2, 5, 4)
    loss = F.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

# runtime: trains
"""A contrastive encoder sizes its projector from the backbone's output: the projector is built
lazily by forward(), and __init__ runs a dummy input through the network, so the projector exists
before the optimizer is built and `Adam(model.parameters())` holds it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, inp=12, proj_dim=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(inp, 20), nn.ReLU(), nn.Flatten())
        self.proj_dim = proj_dim
        with torch.no_grad():
            self.forward(torch.zeros(2, inp))

    def forward(self, x):
        h = self.backbone(x)
        if not hasattr(self, "projector"):
            self.projector = nn.Linear(h.shape[-1], self.proj_dim)
        return F.normalize(self.projector(h), dim=-1)


torch.manual_seed(0)
model = Encoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
before = model.projector.weight.detach().clone()
for step in range(4):
    x = torch.randn(16, 12)
    z1, z2 = model(x + 0.1 * torch.randn_like(x)), model(x + 0.1 * torch.randn_like(x))
    logits = z1 @ z2.t() / 0.5
    loss = F.cross_entropy(logits, torch.arange(16))
    opt.zero_grad()
    loss.backward()
    opt.step()
assert not torch.equal(before, model.projector.weight)

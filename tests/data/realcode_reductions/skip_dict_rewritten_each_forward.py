# reduction-of: segan_pytorch@052238718b03 segan/models/generator.py:185 GA301
# false: GA301
"""A U-Net-like generator keeps its skip connections in a dict built in __init__ (`self.skips =
{i: {'alpha': ...}}`); each forward stores the encoder's activations in it (`skips[i]['tensor'] =
h`, under `if self.skip and i < n - 1`) and the decoder reads them back.

False finding: GA301 confirmed at the encoder's layer call: "carries a tensor with the previous
iteration's graph". The store happens at every forward, before the decoder reads it: the tensor
read is this forward's. The engine keeps the old value of a dict entry stored under a condition
(a weak update); such a value is now not one a later backward() certainly reaches.

Verified with torch 2.13 (CPU): every training step's backward() runs. Prints OK.
"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, skip=True):
        super().__init__()
        self.enc = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)])
        self.dec = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)])
        self.skip = skip
        self.skips = {i: {"alpha": nn.Parameter(torch.ones(1))} for i in range(3)}
        for i, s in self.skips.items():
            self.register_parameter(f"alpha_{i}", s["alpha"])

    def forward(self, x):
        h = x
        skips = self.skips
        for i, layer in enumerate(self.enc):
            h = torch.relu(layer(h))
            if self.skip and i < len(self.enc) - 1:
                skips[i]["tensor"] = h
        j = len(self.enc) - 1
        for layer in self.dec:
            if self.skip and j in self.skips and j < len(self.enc) - 1:
                h = h + skips[j]["alpha"] * skips[j]["tensor"]
            h = layer(h)
            j -= 1
        return h


torch.manual_seed(0)
G = Generator()
opt = torch.optim.Adam(G.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(4, 8)
    loss = ((G(x) - x) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("OK")

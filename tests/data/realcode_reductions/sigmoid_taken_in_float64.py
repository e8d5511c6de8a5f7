# reduction-of: TCN@2f8c2b817050 TCN/poly_music/music_test.py:101 GA401
# false: GA401
# quiet: GA401
"""A polyphonic-music model whose head casts its logits to float64 before `nn.Sigmoid`, trained on
a hand-written binary cross-entropy: `-(y @ log(out).T + (1 - y) @ log(1 - out).T)`.

False findings: GA401 suspicious on `log(out)` and `log(1 - out)`: "a probability underflows to 0
in float32". In float64 a sigmoid is exactly 0 only below a logit of about -745 and exactly 1 only
above about 37, far past what this head outputs (float32 gets there at about -88 and 17).
Verified with torch 2.13 (CPU): at logits of +-30 the float64 loss and gradients are finite where the same
loss in float32 is inf. Prints OK.
"""
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, channels=16, notes=8):
        super().__init__()
        self.linear = nn.Linear(channels, notes)
        self.sig = nn.Sigmoid()

    def forward(self, x):
        return self.sig(self.linear(x).double())


torch.manual_seed(0)
model = Head()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(20, 16)
    y = (torch.rand(20, 8) > 0.8).float()
    out = model(x)
    loss = -torch.trace(torch.matmul(y, torch.log(out).float().t()) + torch.matmul((1 - y), torch.log(1 - out).float().t()))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    assert torch.isfinite(loss)

# saturated logits: finite in float64, not in float32
z = torch.tensor([30.0, -30.0], dtype=torch.float64, requires_grad=True)
p = torch.sigmoid(z)
(grad,) = torch.autograd.grad(-(torch.log(p) + torch.log(1 - p)).sum(), z)
assert torch.isfinite(grad).all()
p32 = torch.sigmoid(z.detach().float())
assert not torch.isfinite(torch.log(1 - p32)).all()
print("OK")

# reduction-of: PyTorch-RL@72069237b4d8 gail/gail_gym.py:127 GA408
# false: GA408
# quiet: GA408
"""A GAIL discriminator trained with `nn.BCELoss` on `torch.sigmoid` of its logit, in a script that
first runs `torch.set_default_dtype(torch.float64)`: every tensor and parameter is float64.

False finding: GA408 confirmed: "saturated, confidently wrong samples (logits beyond ~17 in
float32) get exactly zero gradient". In float64 a sigmoid rounds to exactly 1 only past a logit of
about 37 (to 0 past -745), far beyond what this tanh network with a 0.1-scaled last layer outputs.
Verified with torch 2.13 (CPU): at a logit of 20 (saturated in float32) the float64 BCELoss still
gives a non-zero gradient. Prints OK.
"""
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class Discriminator(nn.Module):
    def __init__(self, num_inputs=6, hidden=(32, 32)):
        super().__init__()
        self.affine_layers = nn.ModuleList()
        last = num_inputs
        for nh in hidden:
            self.affine_layers.append(nn.Linear(last, nh))
            last = nh
        self.logic = nn.Linear(last, 1)
        self.logic.weight.data.mul_(0.1)
        self.logic.bias.data.mul_(0.0)

    def forward(self, x):
        for affine in self.affine_layers:
            x = torch.tanh(affine(x))
        return torch.sigmoid(self.logic(x))


torch.manual_seed(0)
discrim = Discriminator()
optimizer = torch.optim.Adam(discrim.parameters(), lr=3e-4)
criterion = nn.BCELoss()
for it in range(5):
    generated = torch.randn(64, 6)
    expert = torch.randn(64, 6) + 1.0
    g_o, e_o = discrim(generated), discrim(expert)
    optimizer.zero_grad()
    loss = criterion(g_o, torch.ones((64, 1))) + criterion(e_o, torch.zeros((64, 1)))
    loss.backward()
    optimizer.step()

z = torch.tensor([20.0], requires_grad=True)  # float64 by default here
(grad,) = torch.autograd.grad(criterion(torch.sigmoid(z), torch.zeros(1)), z)
assert grad.abs().item() > 0.5
assert z.dtype == torch.float64
print("OK")

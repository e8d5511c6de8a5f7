# runtime: nonfinite
# confidence: suspicious
"""An embedding head normalised by hand: the projection has a bias, but a ReLU follows it, and a
sample whose pre-activations are all negative has the zero vector as its embedding: its norm is 0,
the division gives 0/0 and the loss and every gradient turn NaN. (Without the ReLU the biased
projection's output is never the zero vector, and the same division is safe.)"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
proj = nn.Linear(16, 4)
nn.init.constant_(proj.bias, -1.0)
opt = torch.optim.SGD(proj.parameters(), lr=0.1)
feats = torch.randn(6, 16)
feats[0] = 0.0  # pre-activations of this sample are the (negative) bias
for step in range(3):
    z = torch.relu(proj(feats))
    z = z / z.norm(dim=1, keepdim=True)  # <- GA402
    loss = F.cross_entropy(z @ z.T / 0.1, torch.arange(6))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())

# runtime: trains
"""Pseudo-labels kept where a rescaled confidence passes a threshold: the rescaling divides by a
value that can be 0 (a sum of ReLU outputs), but its result only goes through `>`: a comparison
gives a boolean mask, which holds no inf or NaN (a comparison with NaN is False), so nothing
non-finite reaches the loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
net = nn.Linear(6, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    logits = net(torch.randn(8, 6))
    act = torch.relu(logits.detach() - 10.0)  # all zero here
    ratio = act / act.sum(1, keepdim=True)  # 0/0 = NaN
    keep = (ratio.max(1)[0] > 0.5).float()  # NaN > 0.5 is False
    pseudo = logits.argmax(1)
    loss = (F.cross_entropy(logits, pseudo, reduction="none") * keep).mean() + logits.pow(2).mean() * 1e-3
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)

# runtime: trains
"""`detach_()` of tensors that no op saved as an input: an exp output (exp saves its own output,
which torch rebuilds) and a ReLU output scaled by a number (the scaling saves nothing). The
backward() works; the detached tensors stop carrying gradient from here on."""
import torch
import torch.nn as nn

torch.manual_seed(0)
lin = nn.Linear(3, 3)
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
for step in range(3):
    h = lin(torch.randn(2, 3))
    e = h.exp()
    r = torch.relu(h)
    loss = e.sum() + (r * 2).sum()
    e.detach_()
    r.detach_()
    opt.zero_grad()
    loss.backward()
    opt.step()

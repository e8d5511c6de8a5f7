"""Sharp logits through softmax and then log: probabilities underflow to 0, log(0) and its gradient are not finite."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
body = nn.Linear(8, 16)
out = nn.Linear(16, 3)
optimizer = torch.optim.SGD([*body.parameters(), *out.parameters()], lr=0.01)
for step in range(4):
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    logits = out(torch.tanh(body(x))) * 200.0
    loss = F.nll_loss(torch.log(F.softmax(logits, dim=1)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

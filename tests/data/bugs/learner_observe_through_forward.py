# runtime: nonfinite
# confidence: suspicious
"""A continual learner whose own training step goes through its forward, which divides features by
their norm with no eps: a zero feature row (an all-zero input through a bias-free ReLU layer)
gives 0/0 = NaN in the loss and in every gradient."""
import torch
import torch.nn as nn


class Learner(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.head = nn.Linear(8, 3)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)

    def forward(self, x):
        feats = self.net(x)
        feats = feats / feats.norm(dim=1, keepdim=True)  # <- GA402
        return self.head(feats)

    def observe(self, inputs, labels):
        self.opt.zero_grad()
        loss = nn.functional.cross_entropy(self(inputs), labels)
        loss.backward()
        self.opt.step()
        return loss.item()


torch.manual_seed(0)
model = Learner(nn.Sequential(nn.Linear(4, 8, bias=False), nn.ReLU()))
x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
x[3] = 0.0
for _ in range(3):
    model.observe(x, y)

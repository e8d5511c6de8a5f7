# reduction-of: mammoth@e75a491c69fd models/icarl.py:92 GA402
# false: GA402
# quiet: GA402
"""A continual learner that trains itself in `observe()` through its backbone and classifies in
`forward()` by the nearest class mean of normalised features.

The real code (mammoth models/icarl.py): `ICarl.observe` computes its loss from `self.net(inputs)`,
calls `loss.backward()` and `self.opt.step()`; `ICarl.forward(x)` (the evaluation path, run under
no_grad by the evaluation loop) takes `feats = self.net(x, returnt='features')`, then
`feats = feats / feats.norm(dim=1, keepdim=True)` and distances to the class means.

False finding: GA402 at that division, "seen running `ICarl.forward` on its own with inputs that
require grad: no training step in the checked code reaches it". The class's own training step was
seen (`observe`) and does not go through `forward`: no gradient is ever taken through this division.

Verified with torch 2.13 (CPU): `observe` trains the backbone, `forward` runs under no_grad for the
predictions, and no gradient reaches `forward`'s division. Prints OK.
"""
import torch
import torch.nn as nn


class Learner(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.head = nn.Linear(8, 3)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)
        self.class_means = torch.randn(3, 8)

    def forward(self, x):
        feats = self.net(x)
        feats = feats / feats.norm(dim=1, keepdim=True)
        return -(self.class_means.unsqueeze(0) - feats.unsqueeze(1)).pow(2).sum(2)

    def observe(self, inputs, labels):
        self.opt.zero_grad()
        loss = nn.functional.cross_entropy(self.head(self.net(inputs)), labels)
        loss.backward()
        self.opt.step()
        return loss.item()


if __name__ == "__main__":
    # looked up by name: this check is no use of the class the engine follows, which keeps the class
    # checked on its own, as in the project (its training loop and evaluation live in other files)
    torch.manual_seed(0)
    model = globals()["Learner"](nn.Sequential(nn.Linear(4, 8), nn.ReLU()))
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    first = model.observe(x, y)
    for _ in range(10):
        last = model.observe(x, y)
    assert last < first
    with torch.no_grad():
        pred = model(x).argmax(1)
    assert pred.shape == (16,) and not pred.requires_grad
    print("OK")

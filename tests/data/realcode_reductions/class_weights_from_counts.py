# reduction-of: pytorch_geometric@5c6461b2305a examples/hetero/hetero_link_pred.py:45 GA402
# false: GA402
# quiet: GA402
"""Class weights computed once from the label counts, before training, for a weighted loss.

The real code (heterogeneous link regression): at module level, `weight = torch.bincount(labels)` then
`weight = weight.max() / weight`; the training function's loss is `(weight[target] * (pred - target)
** 2).mean()`.

False finding: GA402 suspicious at the division: "division by a value that can be exactly 0 (a count)".
It is one-time data preparation on constants, outside the training step, which the numerical rules
leave out of scope (rules.md conventions); the engine now leaves out a hazard whose operands carry no
gradient and that was computed outside the loop of the backward it reaches. (A class absent from the
labels would get an inf weight here, but no training target ever indexes it.)

Verified with torch 2.13 (CPU): the weights of the classes present are finite, three training steps
run with finite gradients. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
labels = torch.tensor([0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4])
weight = torch.bincount(labels)
weight = weight.max() / weight
assert torch.isfinite(weight[labels]).all()

model = nn.Linear(4, 1)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
feats = torch.randn(len(labels), 4)


def weighted_mse_loss(pred, target, weight=None):
    weight = 1.0 if weight is None else weight[target].to(pred.dtype)
    return (weight * (pred - target.to(pred.dtype)).pow(2)).mean()


for _ in range(3):
    loss = weighted_mse_loss(model(feats).squeeze(-1), labels, weight)
    opt.zero_grad()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())
    opt.step()
print("OK")

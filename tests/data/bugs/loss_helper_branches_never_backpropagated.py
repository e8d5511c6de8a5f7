# runtime: no-update: model
"""A training loop whose loss comes from a helper with one criterion call per kind of objective
(after MultiBench's `deal_with_objective`): the loop clips and steps but never calls backward(),
so every step applies no gradient. One finding, at the step of the loop where the backward() is
missing, not one per branch of the helper."""
import torch
import torch.nn as nn


def deal_with_objective(objective, pred, truth):
    if isinstance(objective, nn.CrossEntropyLoss):
        return objective(pred, truth.long())
    elif isinstance(objective, nn.MSELoss):
        return objective(pred, truth.float())
    return objective(pred, truth)


torch.manual_seed(0)
model = nn.Linear(4, 2)
objective = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    for x, y in [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]:
        optimizer.zero_grad()
        loss = deal_with_objective(objective, model(x), y)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 8)
        optimizer.step()  # <- GA209

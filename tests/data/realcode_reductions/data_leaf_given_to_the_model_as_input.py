# reduction-of: gnn-model-explainer@HEAD train.py:277 GA108
# false: GA108
"""Node features made into a tensor that requires grad and given to the model as its input.

The real code (GNNExplainer's node-classification trainer): `x = torch.tensor(data["feat"],
requires_grad=True, dtype=torch.float)` before `optimizer = build_optimizer(args,
model.parameters())`, then each epoch `ypred, _ = model(x.cuda(), adj.cuda())` on the GPU or
`model(x, adj)` on the CPU, the loss, `backward()`, `optimizer.step()`.

False finding: GA108 confirmed at the optimizer ("`x` feeds `loss` but is in no param group"): `x`
is the data the model reads (the explainer later reads gradients with respect to the input), not
a weight an optimizer forgot; no parameter of the model is left out.

Verified with torch 2.13 (CPU): every weight of the model changes after the step, `x.grad` is
filled and `x` itself is the data it was. Prints OK.
"""
import sys

import numpy as np
import torch
import torch.nn as nn


class GraphConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, adj):
        return self.lin(adj @ x), adj


def load(n, d):
    rng = np.random.default_rng(0)
    return {"feat": rng.normal(size=(n, d)), "labels": rng.integers(0, 3, size=n), "adj": np.eye(n)}


def train(model, data, gpu, epochs=3):
    labels = torch.tensor(data["labels"], dtype=torch.long)
    adj = torch.tensor(data["adj"], dtype=torch.float)
    x = torch.tensor(data["feat"], requires_grad=True, dtype=torch.float)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    before = [p.detach().clone() for p in model.parameters()]
    feat = x.detach().clone()
    for _ in range(epochs):
        model.zero_grad()
        if gpu:
            ypred, _ = model(x.cuda(), adj.cuda())
        else:
            ypred, _ = model(x, adj)
        loss = nn.functional.cross_entropy(ypred, labels)
        loss.backward()
        optimizer.step()
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
    assert x.grad is not None and torch.equal(x.detach(), feat)


if __name__ == "__main__":
    train(GraphConv(4, 3), load(6, 4), gpu="--gpu" in sys.argv)
    print("OK")

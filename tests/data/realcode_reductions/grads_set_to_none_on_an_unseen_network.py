# reduction-of: tabnet@2c0c4ebd2bb1 pytorch_tabnet/abstract_model.py:537 GA201
# false: GA201
# quiet: GA201
"""A tabular model wrapper whose network is built at fit time by a factory the engine cannot read,
and whose `_train_batch` clears the gradients by hand before each forward:
`for param in self.network.parameters(): param.grad = None`, the optimizer being built from the
same `self.network.parameters()`.

False finding: GA201 confirmed: "`self._optimizer.step()` runs every iteration but nothing in the
loop clears the gradients of its parameters". Setting `.grad = None` on every parameter of the
network clears them, whatever the network holds. Verified with torch 2.13 (CPU): the gradient each
step applies is that batch's alone. Prints OK.
"""
import sys

import torch
import torch.nn as nn


def build_network(input_dim, output_dim):
    return nn.Sequential(nn.Linear(input_dim, 16), nn.ReLU(), nn.Linear(16, output_dim))


class TabModel:
    def __init__(self, optimizer_fn=torch.optim.Adam, optimizer_params=None):
        self.optimizer_fn = optimizer_fn
        self.optimizer_params = optimizer_params or {"lr": 2e-2}

    def _set_network(self, input_dim, output_dim):
        # looked up at run time: the engine does not see which network this is
        factory = vars(sys.modules[__name__])["build_network"]
        self.network = factory(input_dim, output_dim)

    def _set_optimizer(self):
        self._optimizer = self.optimizer_fn(self.network.parameters(), **self.optimizer_params)

    def _train_batch(self, X, y):
        for param in self.network.parameters():
            param.grad = None
        loss = nn.functional.mse_loss(self.network(X), y)
        loss.backward()
        grads = [p.grad.clone() for p in self.network.parameters()]
        self._optimizer.step()
        return loss, grads

    def fit(self, batches):
        self._set_network(batches[0][0].shape[1], batches[0][1].shape[1])
        self._set_optimizer()
        for X, y in batches:
            loss, grads = self._train_batch(X, y)
        return self


torch.manual_seed(0)
data = [(torch.randn(32, 5), torch.randn(32, 1)) for _ in range(4)]
model = TabModel().fit(data)
# one more batch by hand: the gradient after the clear is that batch's alone
X, y = data[0]
for param in model.network.parameters():
    param.grad = None
nn.functional.mse_loss(model.network(X), y).backward()
first = [p.grad.clone() for p in model.network.parameters()]
for param in model.network.parameters():
    param.grad = None
nn.functional.mse_loss(model.network(X), y).backward()
assert all(torch.equal(a, p.grad) for a, p in zip(first, model.network.parameters()))
print("OK")

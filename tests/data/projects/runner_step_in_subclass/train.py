# runtime: stale-grads
"""A runner subclass whose `train_step` backpropagates and steps but never clears the gradients.
Nothing in this file calls it: the base class's loops do, and the runner is picked by name at run
time. The engine runs the inherited `runner()` on an instance of this class, so the step is seen
once per batch.

Verified with torch 2.13 (CPU): from the second batch on, each backward() starts from the gradient
the previous step applied."""
import sys

import torch
import torch.nn as nn

from base_runner import BaseRunner


class RegressionRunner(BaseRunner):
    def build(self):
        self.model = nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]

    def train_step(self, batch):
        x, y = batch
        loss = (self.model(x) - y).pow(2).mean()
        loss.backward()
        self.optimizer.step()  # <- GA201


if __name__ == "__main__":
    torch.manual_seed(0)
    runner = globals()[sys.argv[1] if len(sys.argv) > 1 else "RegressionRunner"]({"epochs": 2})
    runner.runner()

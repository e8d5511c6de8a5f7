# runtime: trains
"""A training configuration read from a file into a dataclass (`TrainConfig(**json.load(fh))`, as
litgpt's `Config.from_file` does): the class defaults say nothing of what the file sets. Here the
file turns on clearing the gradients that the class leaves off by default, and the loop clears
them before every step's backward()."""
import json
import os
import tempfile
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class TrainConfig:
    lr: float = 0.1
    clear_grads: bool = False

    @classmethod
    def from_file(cls, path, **overrides):
        with open(path) as fh:
            values = json.load(fh)
        values.update(overrides)
        return cls(**values)


path = os.path.join(tempfile.mkdtemp(), "train.json")
with open(path, "w") as fh:
    json.dump({"clear_grads": True}, fh)
cfg = TrainConfig.from_file(path, lr=0.05)
assert cfg.clear_grads
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
for i in range(4):
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    if cfg.clear_grads:
        optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

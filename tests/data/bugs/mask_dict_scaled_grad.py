# runtime: error: no gradient for a
"""Per-node-type masks kept in a dict are scaled when they are made (`Parameter(...) * 0.1`
outside the Parameter): each value is computed by an op, not a leaf, so after backward() its
.grad is None and the explainer finds no gradient."""
import torch
import torch.nn as nn
from torch.nn import Parameter


class Explainer:
    def __init__(self):
        self.mask = {}

    def explain(self, model, x):
        for key, feat in x.items():
            self.mask[key] = Parameter(torch.randn(feat.size(0), 1)) * 0.1
        out = sum(model(v * self.mask[k].sigmoid()).sum() for k, v in x.items())
        out.backward()
        for key, m in self.mask.items():
            if m.grad is None:  # <- GA306
                raise ValueError(f"no gradient for {key}")
        return {k: m.grad != 0 for k, m in self.mask.items()}  # <- GA306


model = nn.Linear(4, 1)
x = {"a": torch.randn(3, 4), "b": torch.randn(5, 4)}
hard = Explainer().explain(model, x)

# reduction-of: pytorch_geometric@5c6461b2305a torch_geometric/explain/algorithm/gnn_explainer.py:433 GA306
# false: GA306
"""An explainer keeps its mask as one Parameter for a homogeneous graph and as a dict of
Parameters, one per node type, for a heterogeneous one (`self.mask = {}` then
`self.mask[key] = Parameter(...)`), and after backward() reads each mask's gradient, walking the
dict with `self.mask.items()` on the heterogeneous path.

False finding: GA306 (confirmed here, suspicious in PyG's explainer) at `m.grad`: "reads the
gradient of a non-leaf tensor (computed by an op)". The attribute is a dict or a Parameter,
joined; `.items()` of the Parameter part was taken for a tensor op whose result is computed. No
tensor has `items` (it would raise), so only the dict's Parameters, leaves, are iterated.

Verified with torch 2.13 (CPU): both paths fill every mask's gradient. Prints OK.
"""
import torch
import torch.nn as nn
from torch.nn import Parameter


class Explainer:
    def __init__(self, hetero):
        self.hetero = hetero
        self.mask = None

    def init_masks(self, x):
        if self.hetero:
            self.mask = {}
            for key, feat in x.items():
                self.mask[key] = Parameter(torch.randn(feat.size(0), 1) * 0.1)
        else:
            self.mask = Parameter(torch.randn(x.size(0), 1) * 0.1)

    def collect(self):
        if self.hetero:
            for key, m in self.mask.items():
                if m.grad is None:
                    raise ValueError(f"no gradient for {key}")
            return {k: m.grad != 0 for k, m in self.mask.items()}
        if self.mask.grad is None:
            raise ValueError("no gradient")
        return self.mask.grad != 0

    def explain(self, model, x):
        self.init_masks(x)
        if self.hetero:
            out = sum(model(v * self.mask[k].sigmoid()).sum() for k, v in x.items())
        else:
            out = model(x * self.mask.sigmoid()).sum()
        out.backward()
        return self.collect()


model = nn.Linear(4, 1)
for hetero in (False, True):
    x = {"a": torch.randn(3, 4), "b": torch.randn(5, 4)} if hetero else torch.randn(3, 4)
    hard = Explainer(hetero).explain(model, x)
    assert all(bool(h.any()) for h in (hard.values() if hetero else [hard]))
print("OK")

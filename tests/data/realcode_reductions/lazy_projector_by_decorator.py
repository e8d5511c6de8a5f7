# reduction-of: vit-pytorch@69d24fe9e302 vit_pytorch/lejepa.py:108 GA108
# false: GA108
# quiet: GA108
"""A projector built lazily by a caching decorator, the first time the wrapper's forward runs, and
that first run is a mock forward in `__init__`; the optimizer is built afterwards over all the
wrapper's parameters.

The real code (vit-pytorch's LeJEPA, like its BYOL/DINO learners): `@singleton('projector')` on
`_get_projector` returns a wrapper that reads `getattr(self, 'projector')`, builds the MLP only when
it is None and stores it with `setattr`; `__init__` ends with `self.forward(torch.randn(...))`; the
script then runs `torch.optim.Adam(learner.parameters())`.

False finding: GA108 (suspicious there, confirmed on this reduction) "parameters created in the
training loop and never added to the optimizer". The decorator was not applied: the engine called
the undecorated method, which builds a new projector at every call and never stores it. Applied,
the projector is made once, in `__init__`, before the optimizer, which holds it.

Verified with torch 2.13 (CPU): the optimizer holds every projector parameter and each of them
changes over the steps. Prints OK.
"""
from functools import wraps

import torch
import torch.nn as nn


def singleton(cache_key):
    def inner_fn(fn):
        @wraps(fn)
        def wrapper(self, *args, **kwargs):
            instance = getattr(self, cache_key)
            if instance is not None:
                return instance
            instance = fn(self, *args, **kwargs)
            setattr(self, cache_key, instance)
            return instance

        return wrapper

    return inner_fn


class Learner(nn.Module):
    def __init__(self, net, out_dim=8):
        super().__init__()
        self.net = net
        self.out_dim = out_dim
        self.projector = None
        self.forward(torch.randn(2, 4))  # builds the projector

    @singleton("projector")
    def _get_projector(self, hidden):
        _, dim = hidden.shape
        return nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, self.out_dim))

    def forward(self, x):
        hidden = self.net(x)
        return self._get_projector(hidden)(hidden).pow(2).mean()


torch.manual_seed(0)
learner = Learner(nn.Linear(4, 6))
opt = torch.optim.Adam(learner.parameters(), lr=1e-2)
held = {id(p) for g in opt.param_groups for p in g["params"]}
assert all(id(p) in held for p in learner.projector.parameters())
before = [p.detach().clone() for p in learner.projector.parameters()]
for _ in range(3):
    loss = learner(torch.randn(8, 4))
    opt.zero_grad()
    loss.backward()
    opt.step()
assert all(not torch.equal(b, p) for b, p in zip(before, learner.projector.parameters()))
print("OK")

# reduction-of: adv-robust@6df6a8f0cd49 core/utils/train.py:203 GA107
# false: GA107, GA112
# quiet: GA107
"""Adversarial training that crafts the attack with the model's parameters switched off by a
context manager class: `ctx_noparamgrad(model)` records each parameter's `requires_grad` and sets it
False in `__init__`, and gives the recorded values back in `__exit__`; a @contextmanager helper
wraps it (`with ctx_noparamgrad(module) as a: yield a`).

The real code (adversarial-robustness training, `Trainer.eval` and the attacks): `with
ctx_noparamgrad_and_eval(self.model): x_adv, _ = self.eval_attack.perturb(x, y)`, then the model is
trained on the adversarial batch.

False findings: GA107 at the freeze ("frozen here and never unfrozen, yet `self.optimizer` is given
them"), and GA112 confirmed at the attack's `torch.autograd.grad` ("`loss` then reaches no
trainable parameter"): the engine ran the class's `__init__` (the freeze) but never its `__exit__`
(the restore), so the parameters looked frozen for good.

Verified with torch 2.13 (CPU): the weights change over the training steps. Prints OK.
"""
from contextlib import contextmanager

import torch
import torch.nn as nn
import torch.nn.functional as F


class ctx_noparamgrad(object):
    def __init__(self, module):
        self.prev_grad_state = {p: p.requires_grad for p in module.parameters()}
        self.module = module
        for p in module.parameters():
            p.requires_grad = False

    def __enter__(self):
        pass

    def __exit__(self, *args):
        for p in self.module.parameters():
            p.requires_grad = self.prev_grad_state[p]
        return False


@contextmanager
def ctx_noparamgrad_and_eval(module):
    with ctx_noparamgrad(module) as a:
        yield a


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 3)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def attack(self, x, y):
        x_adv = x.clone().requires_grad_()
        loss = F.cross_entropy(self.model(x_adv), y)
        (g,) = torch.autograd.grad(loss, [x_adv])
        return (x + 0.1 * g.sign()).detach()

    def train_step(self, x, y):
        with ctx_noparamgrad_and_eval(self.model):
            x_adv = self.attack(x, y)
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(x_adv), y)
        loss.backward()
        self.optimizer.step()
        return loss


t = Trainer()
before = t.model.weight.detach().clone()
for _ in range(2):
    t.train_step(torch.randn(8, 4), torch.randint(0, 3, (8,)))
assert not torch.equal(before, t.model.weight)
print("OK")

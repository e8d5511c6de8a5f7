# reduction-of: pytorch-gat@39c8f0ee6344 training_script_cora.py:174 GA102
# false: GA102
"""One loop function for training and validation, chosen by an Enum whose members are written
`TRAIN = 0,` (a trailing comma: their values are tuples); `backward()` runs only under
`if phase == LoopPhase.TRAIN`, and the validation call runs under torch.no_grad().

False finding: GA102 confirmed at the validation's `with torch.no_grad():` ("records no graph ...;
`loss` then ..."): `phase == LoopPhase.TRAIN` is false for `LoopPhase.VAL`, so the backward never
runs there; the comparison of the tuple values was left undecided.

Verified with torch 2.13 (CPU): training and validation run, the weights change. Prints OK.
"""
import enum

import torch
import torch.nn as nn


class LoopPhase(enum.Enum):
    TRAIN = (0,)
    VAL = (1,)


model = nn.Linear(4, 2)
opt = torch.optim.Adam(model.parameters())
x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))


def main_loop(phase):
    loss = nn.functional.cross_entropy(model(x), y)
    if phase == LoopPhase.TRAIN:
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


before = model.weight.detach().clone()
for epoch in range(3):
    main_loop(phase=LoopPhase.TRAIN)
    with torch.no_grad():
        main_loop(phase=LoopPhase.VAL)
assert not torch.equal(before, model.weight)
print("OK")

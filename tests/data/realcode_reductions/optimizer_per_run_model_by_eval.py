# reduction-of: LTSF-Linear@0c113668a3b8 Pyraformer/long_range_main.py:389 GA206
# false: GA206
# quiet: GA206
"""Pyraformer's launcher repeats the experiment `iter_num` times: each `main()` builds the model
from a class named by an option (`eval(opt.model).Model(opt)`), an Adam over its trainable
parameters, and trains it for several epochs.

False finding: GA206 confirmed at the optimizer: "built anew in every iteration of the training
loop". The optimizer is made once per run, with the run's own fresh model, and kept for all of its
epochs. The engine cannot see the model (`eval`), so its parameters are not known one by one; yet
filtering them (`filter(lambda p: p.requires_grad, ...)`, or a comprehension with `if
p.requires_grad`) kept "nothing, exactly", and an optimizer over a known-empty set looked fully
known. What a filter keeps is now known exactly only when what it walks is.

Verified with torch 2.13 (CPU): within a run Adam's step count grows over every epoch. Prints OK.
"""
import torch
import torch.nn as nn
import torch.optim as optim


class Linear:
    @staticmethod
    def Model(opt):
        return nn.Linear(3, 1)


def train(model, optimizer, epochs):
    for _ in range(epochs):
        for _ in range(2):
            x, y = torch.randn(4, 3), torch.randn(4, 1)
            optimizer.zero_grad()
            loss = (model(x) - y).pow(2).mean()
            loss.backward()
            optimizer.step()
    return optimizer


def main(opt, filtered):
    model = eval(opt.model).Model(opt)
    if filtered:
        optimizer = optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), 1e-3)
    else:
        optimizer = optim.Adam([p for p in model.parameters() if p.requires_grad], 1e-3)
    optimizer = train(model, optimizer, 3)
    assert optimizer.state[model.weight]["step"] == 6


class Options:
    model = "Linear"


for i in range(2):
    main(Options(), i == 0)
print("OK")

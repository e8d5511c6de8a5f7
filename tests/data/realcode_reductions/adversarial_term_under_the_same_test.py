# reduction-of: Person_reID_baseline_pytorch@82ff40fb11b7 train_DDP.py:403 GA301
# false: GA301
# quiet: GA301
"""A re-identification loop with an optional adversarial term every `aiter` batches: the
adversarial output is made under `if opt.adv > 0 and iter % opt.aiter == 0:` and added to the
loss, later in the same iteration, under the very same test.

False finding: GA301 confirmed, "`loss` shares part of its graph with a loss whose backward()
already ran": on a batch where the test is false, the name still holds an earlier batch's output,
but the loss reads it only under the same test, which, none of its names assigned in between, is
false again. A test written twice in one iteration (names, attributes, constants and operators
only) takes the same arm both times, and what the first gave each name on that arm is what the
second sees.

Verified with torch 2.13 (CPU): with the term off, every batch, and every second or third batch,
every backward succeeds. Prints OK.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--aiter", type=int, default=2)
opt = parser.parse_args([])
opt.adv = float(os.environ.get("ADV_WEIGHT", "1.0"))


def train(opt):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for iter, (inputs, labels) in enumerate(zip(torch.randn(6, 4, 6), torch.randint(0, 3, (6, 4)))):
        optimizer.zero_grad()
        outputs = model(inputs)
        if opt.adv > 0 and iter % opt.aiter == 0:
            outputs_adv = model(inputs + 0.05 * torch.sign(torch.randn_like(inputs)))
        loss = F.cross_entropy(outputs, labels)
        if opt.adv > 0 and iter % opt.aiter == 0:
            loss += opt.adv * F.cross_entropy(outputs_adv, labels)
        loss.backward()
        optimizer.step()


for adv, aiter in ((0.0, 2), (1.0, 1), (1.0, 2), (0.5, 3)):
    opt.adv, opt.aiter = adv, aiter
    train(opt)
print("OK")

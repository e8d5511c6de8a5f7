# reduction-of: pytorch-examples@77f55b912142 word_language_model/main.py:186 GA205
# false: GA205
# quiet: GA205
"""A training step that updates either with the optimizer or by hand, chosen by a command-line flag.

The real code (word language model): `if args.use_optimizer: optimizer.zero_grad() else: model.zero_grad()`,
forward, `loss.backward()`, clipping, then `if args.use_optimizer: optimizer.step()` else a manual SGD
update `p.data.add_(p.grad, alpha=-lr)` over the model's parameters.

False finding: GA205 suspicious at `loss.backward()`: "runs for every micro-batch while optimizer.step()
runs under a condition: the gradients of the micro-batches add up". The condition is not an accumulation
counter: it picks one of two complete updates, and the other branch clears and updates just the same.
Every iteration clears, backpropagates once and updates; nothing is summed. (Suspicious, so the test of
confirmed findings passes; `quiet` asks for no finding at all.)

Verified with torch 2.13 (CPU): both settings run four steps; each step's gradient is that batch's alone
(equal to a fresh computation) and the parameters change. Prints OK.
"""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--use-optimizer", action="store_true")


def run(argv):
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    lr = 0.1
    for step in range(4):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        if args.use_optimizer:
            optimizer.zero_grad()
        else:
            model.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        fresh = torch.autograd.grad(nn.functional.mse_loss(model(x), y), model.weight)[0]
        assert torch.allclose(model.weight.grad, fresh)
        before = model.weight.detach().clone()
        if args.use_optimizer:
            optimizer.step()
        else:
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
        assert not torch.equal(before, model.weight)


run([])
run(["--use-optimizer"])
print("OK")

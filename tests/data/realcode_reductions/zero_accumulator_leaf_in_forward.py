# reduction-of: mammoth@e75a491c69fd models/coda_prompt_utils/vit.py:132 GA108
# false: GA108
# quiet: GA108
"""CODA-Prompt's ViT starts its prompt loss at zero in every forward,
`prompt_loss = torch.zeros((1,), requires_grad=True)`, adds the prompt losses of the blocks, and
returns it for the learner's `observe()` to add to the task loss.

False finding: GA108 confirmed at the zeros: "created after the optimizer was built and never added
to `opt`: the loss sends them gradient, but nothing updates them". The tensor is an accumulator
made anew at each call, not a weight; no optimizer could train it. A plain tensor made with
requires_grad=True inside a module's forward is now taken as made per call, like one made in the
training loop (parameters made in a forward, a lazily built head, are still reported).

Verified with torch 2.13 (CPU): every step trains the network's weights, and each forward returns a
new accumulator. Prints OK.
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.prompt = nn.Linear(3, 3)

    def forward(self, x, train=False):
        prompt_loss = torch.zeros((1,), requires_grad=True)
        if train:
            prompt_loss = prompt_loss + self.prompt(x).pow(2).mean()
        return self.fc(x), prompt_loss


class Learner:
    def __init__(self):
        self.net = Net()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def observe(self, x, y):
        self.opt.zero_grad()
        out, ploss = self.net(x, train=True)
        loss = (out - y).pow(2).mean() + ploss.sum()
        loss.backward()
        self.opt.step()
        return ploss


learner = Learner()
before = learner.net.fc.weight.detach().clone()
seen = [learner.observe(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
assert not torch.equal(before, learner.net.fc.weight)
assert seen[0] is not seen[1]
print("OK")

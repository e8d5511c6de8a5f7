# reduction-of: philtabor-yt@eb3aa9733158 ReinforcementLearning/ICM/worker.py:35 GA301
# false: GA301
"""An A3C worker with a recurrent cell updated every T_MAX steps: between updates the hidden state
and the segment's values keep their live graph; at an update the state is detached before the
backward(), the segment's memory (lists on an object) is reset after it.

False finding: GA301 confirmed at `hx = cell(x, hx)` ("carries a tensor with the previous
iteration's graph ... freed by the previous backward()"): the backward() runs only on the update
arm, and there nothing keeps the freed graph (the state is detached, the lists are replaced); on
the other arm the graph is kept but nothing freed it. The engine joined the two arms' states.

(The published worker detaches in place, `hx.detach_()`, and torch then raises "Trying to use a
saved tensor that has been detached in-place" at the first backward: a different defect; this
reduction detaches out of place.)

Verified with torch 2.13 (CPU): three episodes of 40 steps with updates every 20 run without error
and the weights change. Prints OK.
"""
import torch
import torch.nn as nn


class Memory:
    def __init__(self):
        self.values = []

    def remember(self, value):
        self.values.append(value)

    def clear_memory(self):
        self.values = []


torch.manual_seed(0)
cell = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.Adam([*cell.parameters(), *head.parameters()], lr=1e-3)
before = head.weight.detach().clone()
memory = Memory()
for episode in range(3):
    hx = torch.zeros(1, 8)
    for t in range(1, 41):
        hx = cell(torch.randn(1, 4), hx)
        memory.remember(head(hx))
        if t % 20 == 0:
            loss = torch.cat(memory.values).pow(2).mean()
            opt.zero_grad()
            hx = hx.detach()
            loss.backward()
            opt.step()
            memory.clear_memory()
assert not torch.equal(before, head.weight)
print("OK")

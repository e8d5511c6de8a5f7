# reduction-of: pytorch-a2c-ppo-acktr-gail@41332b78dfb5 a2c_ppo_acktr/algo/a2c_acktr.py:75 GA208
# false: GA208
"""An RL trainer that picks its agent by name (`if algo == "a2c": ... elif algo == "ppo": ... elif
algo == "acktr": ...`), two of them instances of one class that clips only when `acktr` is off;
each agent's update() clears, backpropagates, clips (or not) and steps, in that order.

False finding: GA208 confirmed at the clip: "gradients are clipped after the optimizer's step()".
The engine runs the loop's `agent.update()` on every agent the name may hold, one after the other,
and which went first followed the order of a set of objects, that is their hashes: it depended on
how many objects the process had made before (another repository's analysis), so the finding came
and went. A joined receiver's objects are now visited in the order they were made.

Verified with torch 2.13 (CPU): with each agent name (`a2c`, `ppo`, `acktr` as the argument) the
updates run and change the weights. Prints OK.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class A2C:
    def __init__(self, model, acktr=False):
        self.model = model
        self.acktr = acktr
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def update(self, x, y):
        if self.acktr:
            self.model.zero_grad()
            fisher = -self.model(x).mean()
            fisher.backward(retain_graph=True)
        self.optimizer.zero_grad()
        F.mse_loss(self.model(x), y).backward()
        if self.acktr == False:
            nn.utils.clip_grad_norm_(self.model.parameters(), 0.5)
        self.optimizer.step()


class PPO:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def update(self, x, y):
        for _ in range(2):
            self.optimizer.zero_grad()
            F.mse_loss(self.model(x), y).backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 0.5)
            self.optimizer.step()


algo = sys.argv[1] if len(sys.argv) > 1 else "a2c"
torch.manual_seed(0)
model = nn.Linear(4, 1)
if algo == "a2c":
    agent = A2C(model)
elif algo == "ppo":
    agent = PPO(model)
elif algo == "acktr":
    agent = A2C(model, acktr=True)
before = model.weight.detach().clone()
for _ in range(3):
    agent.update(torch.randn(8, 4), torch.randn(8, 1))
assert not torch.equal(before, model.weight)
print("OK")

# reduction-of: melgan-neurips@6488045bfba1 scripts/train.py:151 GA201
# false: GA201
"""A GAN whose networks come from a package the engine cannot import (`from mel2wav.modules import
Generator, Discriminator`, found only with the repository on the path); the loop clears the
gradients with `netD.zero_grad()` and steps `optD`, built from `netD.parameters()`.

False finding: GA201 confirmed at `optD.step()`: "nothing in the loop clears the gradients of its
parameters". `netD.zero_grad()` does; the engine took the unseen module (after `.cuda()`) for a
tensor, so `netD.parameters()` gave an exactly known, empty group and zero_grad() nothing. Now
`.parameters()` of a module the engine cannot see is a group it cannot name, and `.zero_grad()` of
it clears what such an optimizer holds.

Not verifiable with torch as written (the module is not importable by design); the script below
defines the stand-in module in a local package written at run time and checks that zero_grad()
clears the gradients optD steps. Verified with torch 2.13 (CPU). Prints OK.
"""
import os
import sys
import tempfile

import torch

pkg = tempfile.mkdtemp()
os.makedirs(os.path.join(pkg, "melstub"))
with open(os.path.join(pkg, "melstub", "__init__.py"), "w") as fh:
    fh.write("import torch.nn as nn\n\nclass Discriminator(nn.Sequential):\n"
             "    def __init__(self):\n        super().__init__(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\n")
sys.path.insert(0, pkg)
from melstub import Discriminator  # noqa: E402

torch.manual_seed(0)
netD = Discriminator().to("cpu")
optD = torch.optim.Adam(netD.parameters(), lr=1e-4)
for _ in range(3):
    loss_D = torch.relu(1 - netD(torch.randn(8, 4))).mean()
    netD.zero_grad()
    assert all(p.grad is None or not p.grad.any() for p in netD.parameters())
    loss_D.backward()
    optD.step()
print("OK")

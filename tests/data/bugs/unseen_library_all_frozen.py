# runtime: error: does not require grad
"""Linear probing of a model from a library the analyzer cannot read, with the unfreezing of the
classifier forgotten: every parameter is frozen and the optimizer is given them all, so nothing
trains and backward() raises. The library is written at run time into a temporary package, so its
source is not beside this script."""
import os
import sys
import tempfile

import torch
import torch.nn.functional as F

pkg = tempfile.mkdtemp()
os.makedirs(os.path.join(pkg, "zoolib"))
with open(os.path.join(pkg, "zoolib", "__init__.py"), "w") as fh:
    fh.write(
        "import torch.nn as nn\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self, classes):\n"
        "        super().__init__()\n"
        "        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())\n"
        "        self.fc = nn.Linear(16, classes)\n\n"
        "    def get_classifier(self):\n"
        "        return self.fc\n\n"
        "    def forward(self, x):\n"
        "        return self.fc(self.body(x))\n\n"
        "def create_model(classes=3):\n"
        "    return Net(classes)\n"
    )
sys.path.insert(0, pkg)
import zoolib  # noqa: E402

torch.manual_seed(0)
model = zoolib.create_model(classes=3)
for p in model.parameters():
    p.requires_grad = False  # <- GA107
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

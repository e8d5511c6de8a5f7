# runtime: trains
"""A classifier made by a factory class (after JORLDY's `Network`): `Network(name, ...)` runs the
class's `__new__`, which looks the name up in a registry and returns that network, not an instance
of the factory class. The network ends in a softmax and the loop feeds its probabilities to
`F.cross_entropy`, which applies log_softmax again: the gradients shrink as the network gets
confident (it still trains, slowly)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftmaxClassifier(nn.Module):
    def __init__(self, d_in, n_classes):
        super().__init__()
        self.body = nn.Linear(d_in, 32)
        self.head = nn.Linear(32, n_classes)

    def forward(self, x):
        return F.softmax(self.head(torch.relu(self.body(x))), dim=-1)


REGISTRY = {"softmax_classifier": SoftmaxClassifier}


class Network:
    def __new__(cls, name, *args, **kwargs):
        return REGISTRY[name](*args, **kwargs)


model = Network("softmax_classifier", 8, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(32, 8), torch.randint(0, 4, (32,))
    loss = F.cross_entropy(model(x), y)  # <- GA407
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# reduction-of: DomainBed@54c2f8c614a9 domainbed/algorithms.py:903 GA301
# false: GA301
"""Representation self-challenging (RSC): the gradient of the class scores with respect to the
features is taken with torch.autograd.grad, a mask is made from it, and the classifier is run again
on the masked features; the loss of that second run is backpropagated into the featurizer too.

The real code (DomainBed's RSC.update): `all_f = self.featurizer(all_x)`, `all_p =
self.classifier(all_f)`, `all_g = autograd.grad((all_p * all_o).sum(), all_f)[0]`, masks from
percentiles of `all_g`, then `loss = F.cross_entropy(self.classifier(all_f * mask), all_y)`;
`loss.backward()`.

False finding: GA301 confirmed at `loss.backward()` ("shares part of its graph with a loss whose
backward() already ran without retain_graph=True: that part was freed"): autograd.grad runs the
graph from the scores down to its inputs, the features, and frees only that part; the featurizer's
graph below the features is not run and still there for the backward.

Verified with torch 2.13 (CPU): the backward runs, and the featurizer's weights get a gradient and
change at each step. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

featurizer = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
classifier = nn.Linear(16, 3)
optimizer = torch.optim.Adam(list(featurizer.parameters()) + list(classifier.parameters()), lr=1e-3)
for it in range(3):
    all_x, all_y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    all_o = F.one_hot(all_y, 3)
    all_f = featurizer(all_x)
    all_p = classifier(all_f)
    all_g = autograd.grad((all_p * all_o).sum(), all_f)[0]
    mask = all_g.lt(all_g.quantile(0.66, dim=1, keepdim=True)).float()
    loss = F.cross_entropy(classifier(all_f * mask), all_y)
    before = featurizer[0].weight.detach().clone()
    optimizer.zero_grad()
    loss.backward()
    assert featurizer[0].weight.grad.abs().sum() > 0
    optimizer.step()
    assert not torch.equal(before, featurizer[0].weight)
print("OK")

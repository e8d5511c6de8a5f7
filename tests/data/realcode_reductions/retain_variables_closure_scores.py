# reduction-of: code-of-learn-deep-learning-with-pytorch@ea24810dc262 chapter9_Computer-Vision/neural-transfer/loss.py:19 GA301
# false: GA301, GA303
"""Neural style transfer written for torch < 0.4: each loss module keeps its loss from the forward
pass and has a `backward(retain_variabels=True)` method calling
`self.loss.backward(retain_variables=retain_variabels)`; the LBFGS closure sums what these return
(`style_score += sl.backward()`) after one forward pass of the image.

False findings: GA301 confirmed at `self.loss.backward(...)`: "shares part of its graph with a loss
whose backward() already ran without `retain_graph=True`". `retain_variables=` is retain_graph's name
before torch 0.4 (removed since): the graph is kept, as the author meant; the engine now reads it
as retain_graph. GA303 confirmed at `style_score += sl.backward()`: "accumulated into state that
outlives the iteration". The score is local to the closure, and every loss summed was built by the
one forward pass before this loop: accumulating it keeps nothing alive that is not alive anyway.

Verified with torch 2.13 (CPU), with Tensor.backward taught the old keyword (it means retain_graph):
every backward() runs and the image changes. Prints OK.
"""

import torch
import torch.nn as nn

_backward = torch.Tensor.backward


def _backward_accepting_retain_variables(
    self, gradient=None, retain_graph=None, create_graph=False, retain_variables=None
):
    # torch < 0.4 spelled retain_graph `retain_variables`; torch 2 refuses it
    keep = retain_graph if retain_variables is None else retain_variables
    return _backward(self, gradient, keep, create_graph)


torch.Tensor.backward = _backward_accepting_retain_variables


class ContentLoss(nn.Module):
    def __init__(self, target, weight):
        super().__init__()
        self.target = target.detach() * weight
        self.weight = weight
        self.criterion = nn.MSELoss()

    def forward(self, input):
        self.loss = self.criterion(input * self.weight, self.target)
        return input.clone()

    def backward(self, retain_variabels=True):
        self.loss.backward(retain_variables=retain_variabels)
        return self.loss


torch.manual_seed(0)
target = torch.rand(1, 8)
style_losses = [ContentLoss(target, 1.0)]
content_losses = [ContentLoss(target * 0.5, 2.0)]
model = nn.Sequential(nn.Linear(8, 8), style_losses[0], nn.Linear(8, 8), content_losses[0])
for p in model.parameters():
    p.requires_grad = False
input_param = nn.Parameter(torch.rand(1, 8))
optimizer = torch.optim.LBFGS([input_param])
before = input_param.detach().clone()


def closure():
    model(input_param)
    style_score = 0
    content_score = 0
    optimizer.zero_grad()
    for sl in style_losses:
        style_score += sl.backward()
    for cl in content_losses:
        content_score += cl.backward()
    return style_score + content_score


for _ in range(2):
    optimizer.step(closure)
assert not torch.equal(before, input_param.detach())
print("OK")

# reduction-of: gnn-model-explainer@bc984829f4f4 explainer/explain.py:597 GA109
# false: GA109
"""An explainer module keeps the input it explains (`self.x = x`, features the caller made with
`requires_grad=True`) beside its own trainable mask (an nn.Parameter in its optimizer); a method
backpropagates the model's prediction to read `self.x.grad` as a saliency map.

False finding: GA109 confirmed at `self.x = x`: "a plain tensor with requires_grad=True, not an
nn.Parameter: parameters() never yields it, so no optimizer updates it". The tensor is the
caller's input, differentiated with respect to, not a weight the module forgot to register. A tensor
stored on a module is now taken as a hidden parameter only when the class's own code made it.

Verified with torch 2.13 (CPU): the saliency map is computed and the mask trains. Prints OK.
"""
import torch
import torch.nn as nn


class Explainer(nn.Module):
    def __init__(self, x, model):
        super().__init__()
        self.x = x
        self.model = model
        self.mask = nn.Parameter(torch.ones(x.shape[1]))

    def forward(self):
        return self.model(self.x * torch.sigmoid(self.mask))

    def saliency(self):
        out = self.model(self.x).sum()
        out.backward()
        return self.x.grad


torch.manual_seed(0)
x = torch.randn(8, 5, requires_grad=True)
model = nn.Linear(5, 1).requires_grad_(False)
explainer = Explainer(x, model)
optimizer = torch.optim.Adam(explainer.parameters(), lr=0.1)
before = explainer.mask.detach().clone()
for _ in range(3):
    optimizer.zero_grad()
    loss = explainer().pow(2).mean() + explainer.mask.abs().mean()
    loss.backward()
    optimizer.step()
saliency = explainer.saliency()
assert saliency is not None
assert not torch.equal(before, explainer.mask)
print("OK")

# reduction-of: pytorch-examples@77f55b912142 fast_neural_style/neural_style/neural_style.py:95 GA301
# false: GA301
"""Style transfer: a target computed once, before the loop, by a feature extractor whose parameters are frozen.

The real code (fast neural style): `vgg = Vgg16(requires_grad=False)` sets `requires_grad = False` on all
its parameters in its __init__; before training, `gram_style = [gram_matrix(y) for y in vgg(style)]`;
each batch's loss compares `gram_matrix(vgg(transformer(x)))` with `gram_style` and is backpropagated.

False finding: GA301 confirmed at `total_loss.backward()`: "shares part of its graph with a loss whose
backward() already ran". Nothing in the target requires grad (the style image does not, the extractor's
parameters are frozen), so autograd records no graph for it: there is nothing to free and nothing shared.

Verified with torch 2.13 (CPU): the target has no grad_fn; three iterations run without error and the
transformer changes in each. Prints OK.
"""
import torch
import torch.nn as nn


class Extractor(nn.Module):
    def __init__(self, requires_grad=False):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
        if not requires_grad:
            for p in self.parameters():
                p.requires_grad = False

    def forward(self, x):
        h1 = self.body(x)
        return [h1, torch.relu(h1 * 2)]


def gram(y):
    b, c, h, w = y.shape
    f = y.view(b, c, h * w)
    return f.bmm(f.transpose(1, 2)) / (c * h * w)


torch.manual_seed(0)
extractor = Extractor(requires_grad=False)
transformer = nn.Conv2d(3, 3, 3, padding=1)
optimizer = torch.optim.Adam(transformer.parameters(), lr=1e-2)
mse = nn.MSELoss()

style = torch.randn(1, 3, 8, 8)
gram_style = [gram(f) for f in extractor(style)]
assert all(g.grad_fn is None and not g.requires_grad for g in gram_style)

for step in range(3):
    x = torch.randn(1, 3, 8, 8)
    before = [p.detach().clone() for p in transformer.parameters()]
    optimizer.zero_grad()
    y = transformer(x)
    features_y = extractor(y)
    content_loss = mse(features_y[0], extractor(x)[0])
    style_loss = 0.0
    for f_y, g_s in zip(features_y, gram_style):
        style_loss += mse(gram(f_y), g_s)
    loss = content_loss + style_loss
    loss.backward()
    optimizer.step()
    assert all(not torch.equal(b, p) for b, p in zip(before, transformer.parameters()))
print("OK")

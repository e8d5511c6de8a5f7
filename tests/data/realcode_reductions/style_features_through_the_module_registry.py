# reduction-of: pytorch-tutorial@0500d3df5a2a tutorials/03-advanced/neural_style_transfer/main.py:44 GA111
# false: GA111
# quiet: GA111
"""Neural style transfer: the image being optimised is a leaf that requires grad, and the features
are taken by walking a VGG-like network's module registry in order (`for name, layer in
self.vgg._modules.items(): x = layer(x)`), whose ReLUs are in place.

False finding: GA111 confirmed at `x = layer(x)`, "in-place update of `target`, leaves that require
grad". The walk over `_modules.items()` ran as one joined iteration, so an in-place ReLU could
seem to be the first layer, applied to the image itself. The first layer is a convolution; each
ReLU changes a convolution's output. A module's children walked by `_modules.items()`,
`named_children()` or `children()` are now one per iteration, in order.

Verified with torch 2.13 (CPU): three steps of Adam on the image, each backward succeeding.
Prints OK.
"""
import torch
import torch.nn as nn


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.select = ["0", "2"]
        self.vgg = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        features = []
        for name, layer in self.vgg._modules.items():
            x = layer(x)
            if name in self.select:
                features.append(x)
        return features


torch.manual_seed(0)
content = torch.randn(1, 3, 8, 8)
target = content.clone().requires_grad_(True)
net = Features().eval()
for p in net.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.Adam([target], lr=0.01)
content_features = [f.detach() for f in net(content)]
for step in range(3):
    loss = sum(((f - c) ** 2).mean() for f, c in zip(net(target), content_features))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("OK")

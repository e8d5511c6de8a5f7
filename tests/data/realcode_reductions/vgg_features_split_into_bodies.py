# reduction-of: CrowdCounting-P2PNet@5c91a81ca062 models/backbone.py:43 GA110
# false: GA110
# quiet: GA110
"""A VGG backbone cut into four bodies from `list(backbone.features.children())` by constant
slices, run one after the other in a loop, each body's output kept for a feature pyramid.

False finding: GA110 confirmed at `xs = layer(xs)`, "in-place change of a tensor that `linear`
saved for backward": every in-place ReLU follows the convolution (or batch norm) of its own body,
whose output no op saves, and each next body starts with a max-pool. `children()` gave the layers
joined in no order, so an in-place ReLU seemed to follow any layer; they are now kept in their
registration order.

Verified with torch 2.13 (CPU): two training steps through the four bodies, each backward
succeeding, with and without batch norm. Prints OK.
"""
import torch
import torch.nn as nn

cfg = [8, "M", 16, "M", 16, 16, "M", 32, "M"]


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features
        self.classifier = nn.Sequential(nn.Linear(32, 10), nn.ReLU(True), nn.Linear(10, 10))


class Backbone(nn.Module):
    def __init__(self, backbone, name):
        super().__init__()
        features = list(backbone.features.children())
        if name == "vgg_bn":
            self.body1 = nn.Sequential(*features[:4])
            self.body2 = nn.Sequential(*features[4:8])
            self.body3 = nn.Sequential(*features[8:15])
            self.body4 = nn.Sequential(*features[15:19])
        else:
            self.body1 = nn.Sequential(*features[:3])
            self.body2 = nn.Sequential(*features[3:6])
            self.body3 = nn.Sequential(*features[6:11])
            self.body4 = nn.Sequential(*features[11:14])

    def forward(self, x):
        out = []
        xs = x
        for _, layer in enumerate([self.body1, self.body2, self.body3, self.body4]):
            xs = layer(xs)
            out.append(xs)
        return out


for name in ("vgg", "vgg_bn"):
    model = Backbone(VGG(make_layers(cfg, name == "vgg_bn")), name)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        outs = model(torch.randn(2, 3, 32, 32))
        loss = sum(o.mean() for o in outs)
        opt.zero_grad()
        loss.backward()
        opt.step()
print("OK")

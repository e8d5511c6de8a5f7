# runtime: error: modified by an inplace operation
"""A style-transfer network trained through a frozen feature extractor: the features are taken by
walking the extractor's module registry (`for name, layer in net._modules.items(): x = layer(x)`),
keeping some layers' outputs. Each residual block of the trained network adds its shortcut in
place onto the output of its last `nn.ReLU`, which the ReLU saved for backward."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.InstanceNorm2d(cout), nn.ReLU())
        self.shortcut = nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        out = self.body(x)
        out += self.shortcut(x)  # <- GA110
        return self.relu(out)


def get_features(image, extractor, layers=("1", "3")):
    features = {}
    x = image
    for name, layer in extractor._modules.items():
        x = layer(x)
        if name in layers:
            features[name] = x
    return features


def train():
    torch.manual_seed(0)
    net = nn.Sequential(Block(3, 8), nn.Conv2d(8, 3, 1))
    extractor = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.ReLU())
    for p in extractor.parameters():
        p.requires_grad_(False)
    content = torch.randn(1, 3, 12, 12)
    target_features = get_features(content, extractor)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(3):
        features = get_features(net(content), extractor)
        loss = sum(((features[k] - target_features[k]) ** 2).mean() for k in features)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    train()

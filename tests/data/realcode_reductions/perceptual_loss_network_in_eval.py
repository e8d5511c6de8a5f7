# reduction-of: PyTorch-GAN@36d3c77e5ff2 implementations/srgan/srgan.py:81 GA108
# false: GA108
"""A super-resolution generator trained with a perceptual (content) loss measured through a fixed
feature network.

The real code (SRGAN, and ESRGAN alike): `FeatureExtractor` wraps the first layers of torchvision's
pretrained `vgg19(...).features`; the script builds it, calls `feature_extractor.eval()`, and the
generator's loss compares `feature_extractor(gen_hr)` with `feature_extractor(imgs_hr).detach()`.
`optimizer_G` holds the generator only; the feature network's parameters keep requires_grad=True.

False finding: GA108 confirmed at `optimizer_G`: "4 parameters of `vgg19_model.features` feed
`loss_G` but are in no param group ... so they never train". The feature network is a fixed loss
network, held in eval() mode and meant never to train: its parameters fill .grad that nothing
reads, a waste of memory, not a parameter that should learn and does not.

Verified with torch 2.13 (CPU): the generator changes, the feature network stays as built.
Prints OK.
"""
import torch
import torch.nn as nn


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()
        )

    def forward(self, img):
        return self.features(img)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3 * 4, 3, padding=1))
        self.shuffle = nn.PixelShuffle(2)

    def forward(self, x):
        return torch.tanh(self.shuffle(self.body(x)))


torch.manual_seed(0)
generator = Generator()
feature_extractor = FeatureExtractor()
feature_extractor.eval()
criterion_content = nn.L1Loss()
optimizer_G = torch.optim.Adam(generator.parameters(), lr=1e-3)

g_before = [p.detach().clone() for p in generator.parameters()]
f_before = [p.detach().clone() for p in feature_extractor.parameters()]
for step in range(3):
    imgs_lr = torch.rand(4, 3, 8, 8)
    imgs_hr = torch.rand(4, 3, 16, 16)
    optimizer_G.zero_grad()
    gen_hr = generator(imgs_lr)
    gen_features = feature_extractor(gen_hr)
    real_features = feature_extractor(imgs_hr)
    loss_G = criterion_content(gen_features, real_features.detach())
    loss_G.backward()
    optimizer_G.step()
assert any(not torch.equal(a, b) for a, b in zip(g_before, generator.parameters()))
assert all(torch.equal(a, b) for a, b in zip(f_before, feature_extractor.parameters()))
print("OK")

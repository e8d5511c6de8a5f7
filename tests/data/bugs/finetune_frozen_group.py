# runtime: no-update: model.backbone
"""Fine-tuning with discriminative learning rates: the backbone gets its own (small) param group,
but the freeze loop left over from the linear-probe stage is never undone."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, n_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def build_optimizer(model, base_lr):
    return torch.optim.SGD([
        {"params": model.backbone.parameters(), "lr": base_lr * 0.1},
        {"params": model.head.parameters(), "lr": base_lr},
    ], momentum=0.9, weight_decay=1e-4)


torch.manual_seed(0)
model = Classifier()
for p in model.backbone.parameters():
    p.requires_grad = False  # <- GA107
optimizer = build_optimizer(model, base_lr=0.05)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3)

for epoch in range(3):
    model.train()
    for _ in range(2):
        images = torch.randn(8, 3, 16, 16)
        labels = torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
    print(epoch, loss.item(), scheduler.get_last_lr())

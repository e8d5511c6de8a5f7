"""Fine-tune a small "pretrained" CNN on a new 5-class image task.

The backbone stands in for a checkpoint trained on 10 classes; we swap its classification head
for the new label set and fine-tune everything with SGD + a cosine schedule. A center-loss term
pulls each sample's embedding towards a learned per-class center.

    python finetune_classifier.py --epochs 3 --batch-size 32

Runs on CPU in a few seconds on synthetic data (no downloads, nothing written to disk).
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class SmallCNN(nn.Module):
    def __init__(self, num_classes: int = 10, width: int = 16):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, kernel_size=3, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, kernel_size=3, padding=1),
            nn.BatchNorm2d(2 * width),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(2 * width, num_classes)

    def embed(self, x):
        return torch.flatten(self.features(x), 1)

    def forward(self, x):
        return self.fc(self.embed(x))


class CenterLoss(nn.Module):
    """Mean squared distance between each embedding and the learned center of its class."""

    def __init__(self, num_classes: int, dim: int):
        super().__init__()
        self.centers = nn.Parameter(0.1 * torch.randn(num_classes, dim))

    def forward(self, feats, labels):
        return (feats - self.centers[labels]).pow(2).sum(dim=1).mean()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-classes", type=int, default=5)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--center-weight", type=float, default=0.01)
    p.add_argument("--train-size", type=int, default=256)
    p.add_argument("--val-size", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def load_pretrained(seed: int) -> SmallCNN:
    # Stand-in for `torch.load(checkpoint)`: a deterministic 10-class model.
    torch.manual_seed(seed)
    return SmallCNN(num_classes=10)


def make_loaders(args):
    g = torch.Generator().manual_seed(args.seed)
    n = args.train_size + args.val_size
    labels = torch.randint(0, args.num_classes, (n,), generator=g)
    # Each class gets its own mean colour so the task is learnable.
    palette = torch.randn(args.num_classes, 3, 1, 1, generator=g)
    images = palette[labels] + 0.8 * torch.randn(n, 3, 16, 16, generator=g)
    train = TensorDataset(images[: args.train_size], labels[: args.train_size])
    val = TensorDataset(images[args.train_size :], labels[args.train_size :])
    return (
        DataLoader(train, batch_size=args.batch_size, shuffle=True, generator=g),
        DataLoader(val, batch_size=args.batch_size),
    )


def train_one_epoch(model, center_loss, loader, optimizer, scheduler, center_weight):
    model.train()
    total, seen = 0.0, 0
    for images, labels in loader:
        optimizer.zero_grad()
        feats = model.embed(images)
        logits = model.fc(feats)
        ce = F.cross_entropy(logits, labels)
        center = center_loss(feats, labels).item()
        loss = ce + center_weight * center
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item() * labels.size(0)
        seen += labels.size(0)
    return total / seen


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct, seen = 0, 0
    for images, labels in loader:
        preds = model(images).argmax(dim=1)
        correct += (preds == labels).sum().item()
        seen += labels.size(0)
    return correct / seen


def main():
    args = parse_args()
    train_loader, val_loader = make_loaders(args)

    model = load_pretrained(args.seed)
    center_loss = CenterLoss(args.num_classes, model.fc.in_features)
    optimizer = torch.optim.SGD(
        [
            {"params": model.parameters()},
            {"params": center_loss.parameters(), "weight_decay": 0.0},
        ],
        lr=args.lr,
        momentum=0.9,
        weight_decay=args.weight_decay,
    )
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=args.epochs * len(train_loader)
    )

    # New label set: replace the 10-way head with a fresh one.
    model.fc = nn.Linear(model.fc.in_features, args.num_classes)

    for epoch in range(args.epochs):
        train_loss = train_one_epoch(
            model, center_loss, train_loader, optimizer, scheduler, args.center_weight
        )
        val_acc = evaluate(model, val_loader)
        print(f"epoch {epoch}: train loss {train_loss:.4f}  val acc {val_acc:.3f}")


if __name__ == "__main__":
    main()

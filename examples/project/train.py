"""Train the project's classifier with discriminative learning rates.

The encoder gets a smaller learning rate than the freshly initialised head.

    cd examples/project && python train.py --epochs 5

Runs on CPU in a few seconds on synthetic data (no downloads, nothing written to disk).
"""

import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from models import Net
from utils import count_parameters, freeze, make_blobs


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--in-dim", type=int, default=20)
    p.add_argument("--num-classes", type=int, default=4)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--encoder-lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)

    x, y = make_blobs(1024, args.in_dim, args.num_classes, seed=args.seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)

    model = Net(args.in_dim, args.num_classes)
    freeze(model.encoder)
    optimizer = torch.optim.AdamW(
        [
            {"params": model.encoder.parameters(), "lr": args.encoder_lr},
            {"params": model.head.parameters(), "lr": args.lr},
        ],
        weight_decay=0.01,
    )
    print(f"{count_parameters(model)} parameters")

    for epoch in range(args.epochs):
        model.train()
        total, correct = 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * yb.size(0)
            correct += (logits.argmax(dim=1) == yb).sum().item()
        print(f"epoch {epoch}: loss {total / len(x):.4f}  acc {correct / len(x):.3f}")


if __name__ == "__main__":
    main()

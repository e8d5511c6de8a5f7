"""Train a multi-label tagger over bag-of-feature vectors, with an attention pooling whose
weights are kept from collapsing onto one feature by an entropy bonus.

Each sample is a set of 12 feature vectors; each of 6 tags is present when a hidden direction
scores high on some vector of the set. The model scores every vector, pools the set with those
scores as attention weights and predicts the tags.

    python multilabel_tagger.py

Runs on CPU in a few seconds on synthetic data (no downloads, nothing written to disk).
"""

import torch
import torch.nn as nn

N_TAGS = 6


def make_batch(n, generator, directions):
    sets = torch.randn(n, 12, 24, generator=generator) * 3.0
    tags = ((sets @ directions).amax(dim=1) > 6.0).float()
    return sets, tags


class SetTagger(nn.Module):
    def __init__(self, dim=24, hidden=64):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.head = nn.Sequential(
            nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, N_TAGS), nn.Sigmoid()
        )

    def forward(self, sets):
        attention = torch.softmax(self.score(sets).squeeze(-1), dim=1)
        pooled = (attention.unsqueeze(-1) * sets).sum(dim=1)
        return self.head(pooled), attention


def attention_entropy(attention):
    return -(attention * torch.log(attention)).sum(dim=1).mean()


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    directions = torch.randn(24, N_TAGS, generator=generator) / 24**0.5
    model = SetTagger()
    criterion = nn.BCELoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)

    for step in range(300):
        sets, tags = make_batch(64, generator, directions)
        probs, attention = model(sets)
        loss = criterion(probs, tags) - 0.01 * attention_entropy(attention)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        if step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

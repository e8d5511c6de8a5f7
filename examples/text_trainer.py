"""Train a GRU text classifier with a small Trainer class.

Sentences are random token sequences of varying length; the label says whether "positive"
tokens (ids in the upper half of the vocabulary) outnumber the others. The encoder is an
embedding + multi-layer GRU; every layer's final state is projected, squashed and averaged
before the classifier.

    python text_trainer.py

Runs on CPU in a few seconds on synthetic data (no downloads, nothing written to disk).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

PAD = 0


class GRUClassifier(nn.Module):
    def __init__(self, vocab_size, embed_dim=32, hidden_dim=48, num_layers=2, num_classes=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD)
        self.gru = nn.GRU(embed_dim, hidden_dim, num_layers=num_layers, batch_first=True)
        self.layer_proj = [nn.Linear(hidden_dim, hidden_dim) for _ in range(num_layers)]
        self.classifier = nn.Linear(hidden_dim, num_classes)

    def encode(self, tokens, lengths):
        """Final hidden state of every GRU layer: (num_layers, batch, hidden_dim)."""
        packed = pack_padded_sequence(
            self.embedding(tokens), lengths, batch_first=True, enforce_sorted=False
        )
        _, h_n = self.gru(packed)
        return h_n

    def head(self, states):
        pooled = torch.stack(
            [torch.tanh(proj(h)) for proj, h in zip(self.layer_proj, states)]
        ).mean(dim=0)
        return self.classifier(pooled)

    def forward(self, tokens, lengths):
        return self.head(self.encode(tokens, lengths))


def make_dataset(n, vocab_size, generator):
    data = []
    for _ in range(n):
        length = int(torch.randint(4, 16, (1,), generator=generator))
        tokens = torch.randint(1, vocab_size, (length,), generator=generator)
        label = int((tokens >= vocab_size // 2).sum() * 2 > length)
        data.append((tokens, label))
    return data


def collate(batch):
    tokens = [t for t, _ in batch]
    lengths = torch.tensor([len(t) for t in tokens])
    labels = torch.tensor([y for _, y in batch])
    return pad_sequence(tokens, batch_first=True, padding_value=PAD), lengths, labels


class Trainer:
    def __init__(self, model, lr=3e-3, max_grad_norm=1.0, log_every=10):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.max_grad_norm = max_grad_norm
        self.log_every = log_every
        self.global_step = 0
        self.last_states = None  # kept for inspecting the sentence representations

    def compute_loss(self, batch):
        tokens, lengths, labels = batch
        states = self.model.encode(tokens, lengths)
        self.last_states = states.detach()
        logits = self.model.head(self.last_states)
        loss = F.cross_entropy(logits, labels)
        accuracy = (logits.argmax(dim=1) == labels).float().mean()
        return loss, accuracy

    def train_step(self, batch):
        self.model.train()
        self.optimizer.zero_grad()
        loss, accuracy = self.compute_loss(batch)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.global_step += 1
        return loss.item(), accuracy.item()

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            running_loss, running_acc, batches = 0.0, 0.0, 0
            for batch in loader:
                loss, acc = self.train_step(batch)
                running_loss += loss
                running_acc += acc
                batches += 1
                if self.global_step % self.log_every == 0:
                    print(f"step {self.global_step}: loss {loss:.4f}")
            print(
                f"epoch {epoch}: loss {running_loss / batches:.4f}  "
                f"acc {running_acc / batches:.3f}"
            )


def main():
    torch.manual_seed(0)
    vocab_size = 50
    g = torch.Generator().manual_seed(0)
    train_data = make_dataset(320, vocab_size, g)
    loader = DataLoader(train_data, batch_size=32, shuffle=True, collate_fn=collate, generator=g)

    model = GRUClassifier(vocab_size)
    trainer = Trainer(model, lr=3e-3)
    trainer.fit(loader, epochs=3)


if __name__ == "__main__":
    main()

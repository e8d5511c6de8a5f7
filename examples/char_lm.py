"""Train a character-level GRU language model with truncated backpropagation through time.

The text is a synthetic stream with a repeating structure (a few "words" drawn at random), cut
into consecutive windows; the hidden state of one window starts the next, so the model can use
context beyond one window.

    python char_lm.py

Runs on CPU in a few seconds on synthetic data (no downloads, nothing written to disk).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

WORDS = ["grad", "flow", "leaf", "loss", "step", "torch"]


def make_stream(n_words, generator):
    alphabet = sorted({c for w in WORDS for c in w} | {" "})
    picks = torch.randint(0, len(WORDS), (n_words,), generator=generator).tolist()
    text = " ".join(WORDS[i] for i in picks)
    index = {c: i for i, c in enumerate(alphabet)}
    return torch.tensor([index[c] for c in text]), len(alphabet)


class CharGRU(nn.Module):
    def __init__(self, vocab_size, embed_dim=16, hidden_dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.gru = nn.GRU(embed_dim, hidden_dim, batch_first=True)
        self.out = nn.Linear(hidden_dim, vocab_size)

    def forward(self, chars, hidden):
        states, hidden = self.gru(self.embed(chars), hidden)
        return self.out(states), hidden


def windows(stream, batch_size, length):
    """Consecutive (input, target) windows of `batch_size` parallel streams."""
    per_stream = (len(stream) - 1) // batch_size
    inputs = stream[: per_stream * batch_size].view(batch_size, per_stream)
    targets = stream[1 : per_stream * batch_size + 1].view(batch_size, per_stream)
    for start in range(0, per_stream - length + 1, length):
        yield inputs[:, start : start + length], targets[:, start : start + length]


def main():
    torch.manual_seed(0)
    stream, vocab_size = make_stream(600, torch.Generator().manual_seed(1))
    model = CharGRU(vocab_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

    for epoch in range(3):
        hidden = torch.zeros(1, 8, 64)
        total_loss = 0.0
        n_batches = 0
        for chars, targets in windows(stream, batch_size=8, length=32):
            logits, hidden = model(chars, hidden)
            loss = F.cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss
            n_batches += 1
        print(f"epoch {epoch}: loss {total_loss / n_batches:.3f}")


if __name__ == "__main__":
    main()

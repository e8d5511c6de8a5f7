# runtime: error: Trying to backward through the graph a second time
"""A character-level LSTM trained with truncated BPTT, but the hidden state is carried from chunk
to chunk without detaching it."""
import torch
import torch.nn as nn


class CharLSTM(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.proj(out), state


def train(model, text, optimizer, seq_len=8, batch=4):
    criterion = nn.CrossEntropyLoss()
    data = text[: (text.numel() // batch) * batch].view(batch, -1)
    state = None
    for start in range(0, data.size(1) - seq_len - 1, seq_len):
        x = data[:, start:start + seq_len]
        y = data[:, start + 1:start + seq_len + 1]
        logits, state = model(x, state)  # <- GA301
        loss = criterion(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
vocab = 20
text = torch.randint(0, vocab, (200,))
model = CharLSTM(vocab, 16)
train(model, text, torch.optim.Adam(model.parameters(), lr=3e-3))

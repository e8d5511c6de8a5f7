# runtime: error: modified by an inplace operation
"""Attention pooling over a padded sequence: the softmax weights are zeroed on padding in place,
but softmax saved its output for backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AttnPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, h, pad_mask):
        weights = torch.softmax(self.score(h).squeeze(-1), dim=1)
        weights.masked_fill_(pad_mask, 0.0)  # <- GA110
        return (weights.unsqueeze(-1) * h).sum(dim=1)


class Tagger(nn.Module):
    def __init__(self, vocab=30, dim=12, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.pool = AttnPool(dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return self.fc(self.pool(h, tokens == 0))


torch.manual_seed(0)
model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(3):
    tokens = torch.randint(1, 30, (4, 7))
    tokens[:, 5:] = 0
    labels = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()

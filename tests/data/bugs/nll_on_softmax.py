# runtime: trains
"""A language-model head that returns softmax probabilities, trained with nll_loss, which expects
log-probabilities (it trains, on the wrong objective)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BigramLM(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return F.softmax(self.proj(self.emb(tokens)), dim=-1)


def train_step(model, opt, tokens):
    probs = model(tokens[:, :-1])
    loss = F.nll_loss(probs.reshape(-1, probs.size(-1)), tokens[:, 1:].reshape(-1))  # <- GA407
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


torch.manual_seed(0)
model = BigramLM()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    train_step(model, opt, torch.randint(0, 12, (4, 9)))

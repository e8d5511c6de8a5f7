# runtime: stale-grads
"""d2l's seq2seq trainer as it shipped: the loss is a subclass of nn.CrossEntropyLoss whose forward
calls `super().forward(...)` with `reduction = 'none'` and weights the result by a mask; the loop
steps Adam after each backward() but never clears the gradients, so every step applies the sum of
all gradients so far."""
import torch
from torch import nn


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, dtype=torch.float32)[None, :] < valid_len[:, None]
    X[~mask] = value
    return X


class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    def forward(self, pred, label, valid_len):
        weights = torch.ones_like(label)
        weights = sequence_mask(weights, valid_len)
        self.reduction = "none"
        unweighted_loss = super(MaskedSoftmaxCELoss, self).forward(pred.permute(0, 2, 1), label)
        return (unweighted_loss * weights).mean(dim=1)


class Seq2Seq(nn.Module):
    def __init__(self, vocab=12, dim=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.dense = nn.Linear(dim, vocab)

    def forward(self, X):
        out, state = self.rnn(self.embedding(X))
        return self.dense(out), state


def train_seq2seq(net, data_iter, lr, num_epochs):
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    loss = MaskedSoftmaxCELoss()
    net.train()
    for epoch in range(num_epochs):
        for X, Y, Y_valid_len in data_iter:
            Y_hat, _ = net(X)
            l = loss(Y_hat, Y, Y_valid_len)
            l.sum().backward()
            optimizer.step()  # <- GA201


torch.manual_seed(0)
data = [(torch.randint(0, 12, (4, 6)), torch.randint(0, 12, (4, 6)), torch.randint(1, 7, (4,))) for _ in range(3)]
train_seq2seq(Seq2Seq(), data, 0.01, 2)

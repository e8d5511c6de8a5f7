"""A readout that builds its pooling module (a module of this file, holding an LSTM) inside
`forward`, from the input's width: new random weights at every call, never registered on the
readout, so no optimizer built from its parameters holds them. The same pooling built once in
`__init__` is not flagged."""
import torch
import torch.nn as nn


class AttentionPool(nn.Module):
    def __init__(self, width, steps=2):
        super().__init__()
        self.steps = steps
        self.cell = nn.LSTM(2 * width, width)

    def forward(self, feats):
        query = feats.new_zeros(1, 1, 2 * feats.size(1))
        state = None
        for _ in range(self.steps):
            q, state = self.cell(query, state)
            weights = torch.softmax(feats @ q[0, 0], dim=0)
            query = torch.cat([q[0, 0], (weights[:, None] * feats).sum(0)])[None, None]
        return query[0, 0]


class Readout(nn.Module):
    def __init__(self, steps=2):
        super().__init__()
        self.steps = steps

    def forward(self, feats):
        pool = AttentionPool(feats.size(1), self.steps)  # <- GA108
        return pool(feats)


class KeptReadout(nn.Module):
    def __init__(self, width, steps=2):
        super().__init__()
        self.pool = AttentionPool(width, steps)

    def forward(self, feats):
        return self.pool(feats)

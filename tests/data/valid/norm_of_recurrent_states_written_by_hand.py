# runtime: trains
"""Full-context embeddings: a bidirectional LSTM (with biases) over the support set, its two
directions summed, then cosine similarities with a norm written by hand,
`x / (x.pow(2).sum(dim=1, keepdim=True).sqrt() + eps)`. An LSTM state is a function of learned
affine maps with biases: it is the zero vector only on a null set of weights, so the root is not
taken at 0."""
import torch
import torch.nn as nn

EPS = 1e-8


class ContextEmbedding(nn.Module):
    def __init__(self, size=16):
        super().__init__()
        self.lstm = nn.LSTM(size, size, bidirectional=True)

    def forward(self, inputs):
        output, (hn, cn) = self.lstm(inputs)
        return output[:, :, : self.lstm.hidden_size] + output[:, :, self.lstm.hidden_size :]


def cosine(x, y):
    x = x / (x.pow(2).sum(dim=1, keepdim=True).sqrt() + EPS)
    y = y / (y.pow(2).sum(dim=1, keepdim=True).sqrt() + EPS)
    return x @ y.t()


torch.manual_seed(0)
g = ContextEmbedding()
optimizer = torch.optim.Adam(g.parameters(), lr=1e-3)
for episode in range(3):
    support = g(torch.randn(6, 1, 16)).squeeze(1)
    queries = torch.randn(4, 16)
    loss = nn.functional.cross_entropy(cosine(queries, support) * 10, torch.tensor([0, 1, 2, 3]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

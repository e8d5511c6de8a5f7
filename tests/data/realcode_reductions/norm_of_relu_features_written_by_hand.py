# reduction-of: few-shot@672de83a853c few_shot/utils.py:66 GA403
# false: GA403
# quiet: GA403
"""Prototypical/matching networks on a conv encoder that ends in ReLU, max-pooling and a flatten;
cosine distances between query embeddings and prototypes use a norm written by hand,
`x / (x.pow(2).sum(dim=1, keepdim=True).sqrt() + EPSILON)`.

False findings: GA403 suspicious on the two `.sqrt()`: "sqrt of a value that can be exactly 0: its
gradient at 0 is infinite, so backward() gives NaN there". An embedding is the zero vector only
when every ReLU unit it pools is inactive; the NaN made at that sqrt(0) goes back through the
pooling to those ReLU outputs, and the ReLU's backward selects 0 where its input was not positive:
no parameter gets a NaN. Verified with torch 2.13 (CPU): with an all-zero embedding in the batch
the embedding's own gradient is NaN, every parameter's gradient is finite. Prints OK.
"""
import torch
import torch.nn as nn

EPSILON = 1e-8


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))


def cosine_distances(x, y):
    normalised_x = x / (x.pow(2).sum(dim=1, keepdim=True).sqrt() + EPSILON)
    normalised_y = y / (y.pow(2).sum(dim=1, keepdim=True).sqrt() + EPSILON)
    return 1 - (normalised_x.unsqueeze(1) * normalised_y.unsqueeze(0)).sum(dim=2)


torch.manual_seed(0)
encoder = nn.Sequential(conv_block(1, 8), conv_block(8, 8), Flatten())
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
for episode in range(3):
    support, queries = torch.randn(6, 1, 8, 8), torch.randn(4, 1, 8, 8)
    embeddings = encoder(torch.cat([support, queries]))
    prototypes = embeddings[:6].reshape(3, 2, -1).mean(dim=1)
    logits = -cosine_distances(embeddings[6:], prototypes)
    loss = nn.functional.cross_entropy(logits, torch.tensor([0, 1, 2, 0]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# an all-zero embedding: every ReLU unit it pools is inactive (a large negative bias)
with torch.no_grad():
    encoder[1][1].bias.fill_(-100.0)
x = torch.randn(3, 1, 8, 8)
emb = encoder(x)
emb.retain_grad()
assert (emb == 0).all()
loss = cosine_distances(emb, torch.randn(2, emb.shape[1])).sum()
encoder.zero_grad()
loss.backward()
assert torch.isnan(emb.grad).any()
assert all(torch.isfinite(p.grad).all() for p in encoder.parameters() if p.grad is not None)
print("OK")

"""DCRNN registers some parameters only in its first forward, so its trainer rebuilds the optimizer
at the first batch (`if batches_seen == 0: optimizer = Adam(model.parameters())`) after
`optimizer.zero_grad()` cleared the first one: from the next batch on, `optimizer.zero_grad()`
clears the new optimizer. A clear of an optimizer (of either one bound to the name) is not a
module's partial clear."""
import torch
import torch.nn as nn


class Lazy(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.decoder = None

    def forward(self, x):
        if self.decoder is None:
            self.decoder = nn.Linear(8, 1)
        return self.decoder(torch.relu(self.encoder(x)))


model = Lazy()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches_seen = 0
for epoch in range(2):
    for _ in range(3):
        optimizer.zero_grad()
        x, y = torch.randn(4, 8), torch.randn(4, 1)
        out = model(x)
        if batches_seen == 0:
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss = nn.functional.mse_loss(out, y)
        batches_seen += 1
        loss.backward()
        optimizer.step()

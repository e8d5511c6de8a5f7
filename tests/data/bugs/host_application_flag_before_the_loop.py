# runtime: skip (imports a package of the host application it is installed in)
"""An extension of a host application (after sd_dreambooth_extension) returns early when the host's
shared `status.interrupted` flag is set, then trains, re-wrapping the model's prediction with
`torch.autograd.Variable(pred, requires_grad=True)`: a fresh leaf, so the loss trains nothing.
`status` comes from a package only the host application provides: the engine cannot resolve
`status.interrupted`, and took the truth of that unresolved name for True, so the guard always
returned and the loop was never analysed. Checked with torch 2.13 (CPU, the host's module stubbed
with interrupted = False): the model's weight is unchanged after five steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from extensions.dreambooth_ext.shared import status


def train(steps):
    if status.interrupted:
        return None
    model = nn.Linear(8, 8)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(steps):
        x, noise = torch.randn(4, 8), torch.randn(4, 8)
        pred = torch.autograd.Variable(model(x), requires_grad=True)  # <- GA106
        loss = F.mse_loss(pred, noise)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return model


train(5)

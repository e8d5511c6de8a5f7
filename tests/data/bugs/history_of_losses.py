# runtime: graph-kept: history
"""A training function that returns its loss history for plotting, appending the loss tensors
themselves: every step's graph stays alive."""
import torch
import torch.nn as nn


def train(model, optimizer, batches, epochs=2):
    history = []
    for epoch in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            loss = nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(1), y)
            loss.backward()
            optimizer.step()
            history.append(loss)  # <- GA303
    return history


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
batches = [(torch.randn(16, 5), torch.randint(0, 2, (16,)).float()) for _ in range(3)]
history = train(model, optimizer, batches)
print(len(history))

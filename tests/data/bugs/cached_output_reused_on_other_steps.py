# runtime: error: Trying to backward through the graph a second time
"""A teacher output refreshed only on even steps and reused on odd ones: the condition is a
counter, so on an odd step the value read is the previous iteration's, whose graph that
iteration's backward() freed (unlike a configuration setting, whose untaken arm is untaken in
every iteration; see tests/data/realcode_reductions/fused_output_under_correlated_settings.py)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(6, 4)
head = nn.Linear(4, 1)
optimizer = torch.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.1)
for step in range(4):
    x = torch.randn(8, 6)
    if step % 2 == 0:
        features = torch.tanh(model(x))
    loss = head(features).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()  # <- GA301
    optimizer.step()

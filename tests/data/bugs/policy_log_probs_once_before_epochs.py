# runtime: error: Trying to backward through the graph a second time
"""A policy-gradient update that reuses a batch for several epochs but evaluates the policy's
log-probabilities once, before the epoch loop: every epoch backpropagates the same graph, and the
second backward() reaches the graph the first one freed."""
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)

states = torch.randn(64, 4)
with torch.no_grad():
    actions = torch.multinomial(torch.softmax(policy(states), -1), 1)
advantages = torch.randn(64)

log_probs = torch.log_softmax(policy(states), -1).gather(1, actions).squeeze(1)
for epoch in range(4):
    loss = -(log_probs * advantages).mean()
    optimizer.zero_grad()
    loss.backward()  # <- GA301
    optimizer.step()

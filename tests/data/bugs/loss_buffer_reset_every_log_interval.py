# runtime: graph-kept: loss_buffer
"""A REINFORCE loop (after SCoBots) that logs the mean loss every `LOG_EVERY` episodes: the episode's
loss, graph and all, is added into `loss_buffer`, which is reset to 0 only after each log. Between
two logs the buffer keeps every episode's graph alive (the nodes of up to LOG_EVERY episodes, the
activations too if backward() had not freed them): `.item()` is what the log needs."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2), nn.Softmax(dim=-1))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
LOG_EVERY = 10
loss_buffer = 0.0
for episode in range(1, 26):
    log_probs, rewards = [], []
    for t in range(8):
        dist = Categorical(policy(torch.randn(4)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        rewards.append(float(action) - 0.5)
    returns = torch.tensor(rewards).flip(0).cumsum(0).flip(0)
    loss = -(torch.stack(log_probs) * returns).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss_buffer += loss  # <- GA303
    if episode % LOG_EVERY == 0:
        print(f"episode {episode}: mean loss {float(loss_buffer) / LOG_EVERY:.3f}")
        loss_buffer = 0.0

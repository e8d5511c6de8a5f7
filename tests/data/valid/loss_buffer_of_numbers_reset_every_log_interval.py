"""The same REINFORCE loop logging every `LOG_EVERY` episodes from a buffer of Python numbers
(`loss.item()`), reset after each log: no graph outlives its episode. A second buffer is reset at
the top of every episode and holds only that episode's graph."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2), nn.Softmax(dim=-1))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
LOG_EVERY = 10
loss_buffer = 0.0
for episode in range(1, 26):
    episode_loss = 0.0
    log_probs, rewards = [], []
    for t in range(8):
        dist = Categorical(policy(torch.randn(4)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        rewards.append(float(action) - 0.5)
    returns = torch.tensor(rewards).flip(0).cumsum(0).flip(0)
    for lp, ret in zip(log_probs, returns):
        episode_loss = episode_loss - lp * ret
    optimizer.zero_grad()
    episode_loss.backward()
    optimizer.step()
    loss_buffer += episode_loss.item()
    if episode % LOG_EVERY == 0:
        print(f"episode {episode}: mean loss {loss_buffer / LOG_EVERY:.3f}")
        loss_buffer = 0.0

# runtime: trains
"""A batched policy gradient that keeps the policy's probabilities (`softmax`), samples the actions
from them and takes the log of the probability of each sampled action, `torch.log(probs.gather(1,
actions))`: a sampled action had probability > 0, so the log is finite."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(4):
    states = torch.randn(16, 4)
    probs = F.softmax(policy(states), dim=1)
    actions = Categorical(probs).sample().unsqueeze(1)
    returns = (actions.squeeze(1) == 0).float() - 0.3
    log_probs = torch.log(probs.gather(1, actions)).squeeze(1)
    assert torch.isfinite(log_probs).all()
    loss = -(log_probs * returns).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# runtime: graph-kept: logp_old
# confidence: suspicious
"""PPO as an early PyTorch port wrote it: the rollout keeps the old policy's log-probabilities
with their graph, and the update backpropagates the clipped surrogate through them at every
epoch. Without `retain_graph=True` the second epoch raises "Trying to backward through the graph
a second time"; with it, every epoch sends gradient into the old policy's stale graph (its
parameters, in no optimizer, gather a gradient each epoch) and that graph stays alive."""
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
policy_old = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
policy_old.load_state_dict(policy.state_dict())
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
states = torch.randn(32, 4)
actions = torch.randint(0, 2, (32,))
advantages = torch.randn(32)
logp_old = policy_old(states).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
for epoch in range(4):
    logp = policy(states).log_softmax(-1).gather(1, actions[:, None]).squeeze(1)
    ratio = torch.exp(logp - logp_old)
    loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)  # <- GA302
    optimizer.step()

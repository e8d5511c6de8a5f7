# runtime: trains
"""PPO as DeepRL writes it: the rollout keeps detached values and log-probabilities, and one last
row holds the bootstrap value with its graph (`rollout.append([states, pending_value, None, ...])`).
Unpacked row by row (`states, value, log_probs = rollout[i]`), each name takes its own column: the
log-probabilities that the update epochs reuse carry no graph, so the backward() of each minibatch
frees nothing a later one needs."""
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.pi = nn.Linear(16, 2)
        self.v = nn.Linear(16, 1)

    def forward(self, obs, action=None):
        h = torch.tanh(self.body(obs))
        dist = torch.distributions.Categorical(logits=self.pi(h))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action).unsqueeze(-1), self.v(h)


torch.manual_seed(0)
np.random.seed(0)
network = Net()
opt = torch.optim.Adam(network.parameters(), lr=3e-4)
states = torch.randn(8, 4)
for update in range(3):
    rollout = []
    for _ in range(4):
        actions, log_probs, values = network(states)
        rewards = np.random.rand(8)
        next_states = torch.randn(8, 4)
        rollout.append([states, values.detach(), actions.detach(), log_probs.detach(), rewards])
        states = next_states
    pending_value = network(states)[-1]
    rollout.append([states, pending_value, None, None, None])
    processed = [None] * (len(rollout) - 1)
    returns = pending_value.detach()
    for i in reversed(range(len(rollout) - 1)):
        s, value, actions, log_probs, rewards = rollout[i]
        returns = torch.tensor(rewards, dtype=torch.float32).unsqueeze(1) + 0.99 * returns
        processed[i] = [s, actions, log_probs, returns, returns - value.detach()]
    s, actions, log_probs_old, returns, advantages = map(lambda x: torch.cat(x, dim=0), zip(*processed))
    for epoch in range(3):
        for idx in torch.randperm(s.size(0)).split(8):
            _, log_probs, values = network(s[idx], actions[idx])
            ratio = (log_probs - log_probs_old[idx]).exp()
            policy_loss = -torch.min(ratio * advantages[idx], ratio.clamp(0.8, 1.2) * advantages[idx]).mean()
            value_loss = 0.5 * (returns[idx] - values).pow(2).mean()
            opt.zero_grad()
            (policy_loss + value_loss).backward()
            opt.step()

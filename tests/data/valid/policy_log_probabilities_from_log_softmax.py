"""The same PPO actor taking the log-probability of the action from `log_softmax` itself (and
keeping the probabilities, `exp` of it, only for the entropy): no log of a value that can be 0."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.pi = nn.Linear(16, 3)

    def forward(self, x):
        return F.log_softmax(self.pi(torch.relu(self.body(x))), dim=-1)


torch.manual_seed(0)
policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
for update in range(3):
    states = torch.randn(32, 4) * 300.0
    actions = torch.randint(0, 3, (32, 1))
    advantages = torch.randn(32, 1)
    old_log_prob = torch.randn(32, 1).clamp(max=0.0)
    log_pi = policy(states)
    entropy = -(log_pi.exp() * log_pi).sum(-1).mean()
    log_prob = log_pi.gather(1, actions)
    ratio = (log_prob - old_log_prob).exp()
    loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean() - 0.01 * entropy
    opt.zero_grad()
    loss.backward()
    opt.step()

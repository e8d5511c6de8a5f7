# runtime: nonfinite
# confidence: suspicious
"""A discrete PPO actor (after JORLDY): the policy network returns its action probabilities as
`torch.exp(F.log_softmax(logits))` and the loss takes `log` of the probability picked at the
action. The exp of a log-probability is a probability again: where the logits are far apart it
underflows to exactly 0 in float32, the log is -inf and the ratio's gradient NaN."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 16)
        self.pi = nn.Linear(16, 3)

    def forward(self, x):
        return torch.exp(F.log_softmax(self.pi(torch.relu(self.body(x))), dim=-1))


torch.manual_seed(0)
policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
for update in range(3):
    states = torch.randn(32, 4) * 300.0
    actions = torch.randint(0, 3, (32, 1))
    advantages = torch.randn(32, 1)
    old_log_prob = torch.randn(32, 1).clamp(max=0.0)
    pi = policy(states)
    log_prob = torch.log(pi.gather(1, actions))  # <- GA401
    ratio = (log_prob - old_log_prob).exp()
    loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

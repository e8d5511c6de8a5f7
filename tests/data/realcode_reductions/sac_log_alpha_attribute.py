# reduction-of: minimalRL@c8efed8481e3 sac.py:86 GA101
# false: GA101
"""SAC's temperature: `self.log_alpha = torch.tensor(np.log(0.01))`, then
`self.log_alpha.requires_grad = True`, with an optimizer of its own; the temperature loss is
`-(self.log_alpha.exp() * (log_prob + target_entropy).detach()).mean()`.

False finding: GA101 confirmed at the `.detach()`: "cuts gradient to ... `pi`: they reach
`alpha_loss` by no other path; `alpha_loss` then reaches no trainable parameter and backward()
raises". The detach is the idiom (only the temperature learns from this loss) and `log_alpha` is a
leaf that requires grad and sits in an optimizer: it is trained. The engine did not store the new
leaf in the attribute when requires_grad was set on `self.log_alpha`; now it does.

Verified with torch 2.13 (CPU): alpha_loss.backward() runs and log_alpha changes. Prints OK.
"""
import numpy as np
import torch
import torch.nn as nn


class PolicyNet(nn.Module):
    def __init__(self, init_alpha=0.01, lr_alpha=1e-2):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.log_alpha = torch.tensor(np.log(init_alpha))
        self.log_alpha.requires_grad = True
        self.log_alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=lr_alpha)

    def forward(self, s):
        mu = self.fc(s)
        return mu, -(mu**2).sum(-1)

    def train_net(self, s, target_entropy=-2.0):
        _, log_prob = self.forward(s)
        loss = (self.log_alpha.exp().detach() * log_prob).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

        self.log_alpha_optimizer.zero_grad()
        alpha_loss = -(self.log_alpha.exp() * (log_prob + target_entropy).detach()).mean()
        alpha_loss.backward()
        self.log_alpha_optimizer.step()


torch.manual_seed(0)
pi = PolicyNet()
before = pi.log_alpha.detach().clone()
for _ in range(3):
    pi.train_net(torch.randn(8, 3))
assert not torch.equal(before, pi.log_alpha.detach())
print("OK")

# runtime: error: modified by an inplace operation
"""SAC's update as rlkit shipped it: the critic is stepped before the actor's loss, built on the
critic's output, is backpropagated; the critic's step changed the weights that graph saved."""
import torch
from torch import nn

import pkg.torch.util as ptu
from pkg.torch.nets import FlattenMlp

torch.manual_seed(0)
policy = nn.Linear(4, 2)
qf = FlattenMlp(6, 1)
log_alpha = ptu.zeros(1, requires_grad=True)
alpha_optimizer = torch.optim.Adam([log_alpha], lr=1e-3)
policy_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
qf_optimizer = torch.optim.Adam(qf.parameters(), lr=1e-3)
criterion = nn.MSELoss()
for _ in range(5):
    obs, actions, rewards = torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 1)
    new_actions = torch.tanh(policy(obs))
    alpha_loss = -(log_alpha * new_actions.detach().pow(2).sum(1).mean()).mean()
    alpha_optimizer.zero_grad()
    alpha_loss.backward()
    alpha_optimizer.step()
    policy_loss = (log_alpha.exp().detach() * new_actions.pow(2).sum(1) - qf(obs, new_actions)).mean()  # <- GA304
    qf_loss = criterion(qf(obs, actions), rewards)
    qf_optimizer.zero_grad()
    qf_loss.backward()
    qf_optimizer.step()
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()

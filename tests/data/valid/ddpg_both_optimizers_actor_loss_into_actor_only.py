"""The valid look-alike of ddpg_both_optimizers_cleared_first_actor_loss_into_critic: the actor's
loss is backpropagated into the actor's parameters only (`backward(inputs=...)`), so the critic's
step applies its TD loss's gradients alone. Checked with torch 2.13: after the actor's backward the
critic's parameters hold no gradient."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
target_actor, target_critic = copy.deepcopy(actor), copy.deepcopy(critic)
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for _ in range(3):
    state, next_state = torch.randn(32, 3), torch.randn(32, 3)
    action, reward = torch.rand(32, 1) * 2 - 1, torch.randn(32, 1)
    policy_loss = -critic(torch.cat([state, actor(state)], 1)).mean()
    next_action = target_actor(next_state).detach()
    target = reward + 0.99 * target_critic(torch.cat([next_state, next_action], 1))
    value_loss = F.mse_loss(critic(torch.cat([state, action], 1)), target.detach())
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    policy_loss.backward(inputs=list(actor.parameters()))
    value_loss.backward()
    actor_opt.step()
    critic_opt.step()

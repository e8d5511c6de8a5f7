"""DDPG (after joyrl-offline): both optimizers are cleared first, then the actor's loss
`-Q(s, pi(s))` and the critic's TD loss are backpropagated, then both step. The actor's backward
runs through the critic and leaves its gradients there, and the critic's step applies them with its
TD loss's: the critic is pushed to raise Q of the actor's actions instead of fitting its target.
The TD target comes from target networks, so the critic's loss never reaches the actor. Checked
with torch 2.13: after the actor's backward alone the critic's last layer holds a gradient of norm
about 0.8-1.1."""
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
    policy_loss = -critic(torch.cat([state, actor(state)], 1)).mean()  # <- GA304
    next_action = target_actor(next_state).detach()
    target = reward + 0.99 * target_critic(torch.cat([next_state, next_action], 1))
    value_loss = F.mse_loss(critic(torch.cat([state, action], 1)), target.detach())
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    policy_loss.backward()
    value_loss.backward()
    actor_opt.step()
    critic_opt.step()

# reduction-of: philtabor-yt@eb3aa9733158 ReinforcementLearning/DeepQLearning/dueling_ddqn_torch.py:166 GA204
# false: GA204
"""A DQN whose network class builds its own optimizer in `__init__`: the online network's steps,
the target network's never does; the target is synced by `load_state_dict` every few steps, and
its output enters the target value without `.detach()` (its gradients are computed and unused).

False finding: GA204 confirmed at `loss.backward()` ("computes gradients for the parameters of
`q_next` ..., but the optimizer, which holds them, never steps: they never change"): the target
network changes, by `load_state_dict` from the online network (a soft update through a mixed state
dict in SAC and TD3 is the same).

Verified with torch 2.13 (CPU): the target network's weights change at each sync and the online
network trains. Prints OK.
"""
import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)

    def forward(self, s):
        return self.fc(s)


q_eval, q_next = QNet(), QNet()
first = q_next.fc.weight.detach().clone()
for step in range(6):
    q_eval.optimizer.zero_grad()
    if step % 3 == 0:
        q_next.load_state_dict(q_eval.state_dict())
    s, s_next, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
    q_pred = q_eval(s)[torch.arange(8), 0]
    q_target = r + 0.99 * q_next(s_next).max(dim=1)[0]
    loss = nn.functional.mse_loss(q_target, q_pred)
    loss.backward()
    q_eval.optimizer.step()
assert not torch.equal(first, q_next.fc.weight)
print("OK")

# reduction-of: neurodiffeq@9f6d6e318ce9 neurodiffeq/hypersolver/numerical_solvers.py:31 GA303
# false: GA303
"""A hypersolver: a network is trained on the residuals of an Euler scheme, then an ODE is solved
with the scheme corrected by the network, each state appended to the trajectory. The scheme's own
`step(func, u, t, h)` is called inside the trajectory loop, its result computed with.

False finding: GA303 confirmed at `us.append(u_new)`: "a tensor with its autograd graph is
accumulated into state that outlives the iteration". The trajectory is the solution, built after
training and returned; the loop updates nothing: its `.step(...)` is the solver's, whose result is
an operand, and was taken for an optimizer's step making each iteration an update. A `.step()` now
counts as an update only as a statement of its own or a named closure loss.

Verified with torch 2.13 (CPU): the trajectory has its 11 states and the network trained. Prints OK.
"""
import torch
import torch.nn as nn


class Euler:
    def step(self, func, u, t, h):
        return func(u, t)

    def solve(self, func, u0, n_steps, hypernet):
        ts = torch.linspace(0, 1, n_steps + 1)
        h = 1.0 / n_steps
        us = [torch.tensor([u0])]
        for t in ts[:-1]:
            u_old = us[-1]
            u_new = u_old + h * torch.tensor(self.step(func, u_old, t, h))
            u_new = u_new + h**2 * hypernet(torch.cat([t.reshape(1), u_old])).flatten()
            us.append(u_new)
        return torch.stack(us)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
inputs, residuals = torch.randn(32, 2), torch.randn(32, 1)
before = [p.detach().clone() for p in net.parameters()]
for epoch in range(3):
    loss = nn.functional.mse_loss(net(inputs), residuals)
    loss.backward()
    opt.step()
    opt.zero_grad()
trajectory = Euler().solve(lambda u, t: -u.detach(), 1.0, 10, net)
assert trajectory.shape == (11, 1)
assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters()))
print("OK")

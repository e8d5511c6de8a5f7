# reduction-of: diffusers@58eb52c0803e examples/research_projects/sana/train_sana_sprint_diffusers.py:883 GA403
# false: GA403
# quiet: GA403
"""SANA-Sprint's TrigFlow wrapper rescales the latents by `sqrt(f ** 2 + (1 - f) ** 2)`, with
`f = sin(t) / (cos(t) + sin(t))` of the (differentiable) timestep.

False finding: GA403 suspicious (a unit run of the module's forward), "sqrt of a value that can be
exactly 0". f ** 2 + (1 - f) ** 2 is at least 1/2 for every real f: a sum of two values >= 0 is 0
only where both are, and f ** 2 is no value known to be 0 anywhere. The sum is now taken as able to
be 0 only when both of its terms can be (each a ReLU output, a probability, a count...); the
engine had begun to take the square's sign (>= 0) as enough.

Verified with torch 2.13 (CPU): the root is >= 0.7071 over t in [0, pi/2] and the gradients with
respect to t and the weights are finite. Prints OK.
"""
import math

import torch
import torch.nn as nn


class TrigFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, hidden_states, timestep):
        timestep = timestep.expand(hidden_states.shape[0])
        flow = torch.sin(timestep) / (torch.cos(timestep) + torch.sin(timestep))
        f = flow.view(-1, 1)
        scale = torch.sqrt(f**2 + (1 - f) ** 2)
        assert (scale >= 0.7071).all()
        return self.net(hidden_states * scale)


torch.manual_seed(0)
model = TrigFlow()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(20):
    t = torch.tensor([it / 19 * math.pi / 2], requires_grad=True)
    loss = model(torch.randn(8, 4), t).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(t.grad).all() and all(torch.isfinite(p.grad).all() for p in model.parameters())
    opt.step()
print("OK")

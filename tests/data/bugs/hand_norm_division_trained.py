# runtime: nonfinite
# confidence: suspicious
"""Point-cloud features normalised by a norm written by hand, `sqrt((x * x).sum(-1))`: a point at
the origin has norm 0, its direction is 0/0, and the loss and every gradient turn NaN at the first
step. The root alone is already a hazard: its gradient at 0 is infinite, so even a clamp of the norm
after it gives 0 * inf = NaN (torch's `vector_norm` defines a gradient at 0)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
points = torch.randn(8, 16, 3)
points[0, 0] = 0.0  # a point at the origin
labels = torch.randint(0, 4, (8,))

encoder = nn.Linear(3, 3, bias=False)
head = nn.Linear(3, 4)
opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-3)
for step in range(3):
    x = encoder(points)
    norm = torch.sqrt((x * x).sum(-1, keepdim=True))  # <- GA403
    direction = x / norm  # <- GA402
    loss = nn.functional.cross_entropy(head(direction.mean(1)), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())

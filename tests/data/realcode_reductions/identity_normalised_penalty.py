# reduction-of: pytorch_geometric@5c6461b2305a torch_geometric/nn/dense/mincut_pool.py:94 GA402
# false: GA402
# quiet: GA402
"""An orthogonality penalty that compares the normalised Gram matrix of soft cluster assignments
with the identity divided by its own norm.

The real code (PyG's dense_mincut_pool and DMoNPooling): `i_s = torch.eye(k).type_as(ss)` and
`i_s / torch.norm(i_s)` inside the pooling's regularizer, which the training loss includes.

False finding: GA402 suspicious at `i_s / torch.norm(i_s)`, "division by a value that can be exactly
0". The norm of an identity matrix is sqrt(k) > 0, and `type_as(ss)` takes only ss's dtype and
device, no values. (The Gram matrix's own normalisation here has an eps; in PyG it has none, and an
empty graph in a dense batch makes it 0/0: that one is a true suspicious finding.)

Verified with torch 2.13 (CPU): the loss and every gradient stay finite over the steps and the
penalty decreases. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
assign = nn.Linear(6, 3)
opt = torch.optim.Adam(assign.parameters(), lr=0.05)
x = torch.randn(2, 5, 6)
first = None
for step in range(20):
    s = torch.softmax(assign(x), dim=-1)
    ss = torch.matmul(s.transpose(1, 2), s)
    i_s = torch.eye(3).type_as(ss)
    loss = torch.norm(ss / (torch.norm(ss, dim=(-1, -2), keepdim=True) + 1e-9) - i_s / torch.norm(i_s), dim=(-1, -2))
    loss = loss.mean()
    first = loss.item() if first is None else first
    opt.zero_grad()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in assign.parameters())
    opt.step()
assert loss.item() < first, (first, loss.item())
print("OK")

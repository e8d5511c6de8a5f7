# reduction-of: GraphMAE@b14f080c9192 chem/finetune.py:46 GA402
# false: GA402
# quiet: GA402
"""A masked mean whose numerator passes through `torch.where(mask, loss, 0)`: the padding of missing
labels in molecular property prediction.

The real code (and pretrain-gnns, which it copies): `is_valid = y ** 2 > 0`, the per-label loss
matrix is replaced by 0 where the label is missing with `torch.where(is_valid, loss_mat, zeros)`, and
the loss is `torch.sum(loss_mat) / torch.sum(is_valid)`.

False finding: GA402 suspicious at the division: "division by a value that can be exactly 0 (a
count)". A batch with no valid label does make the loss value 0/0 = NaN, but backward gives the
sum's gradient 1/0 = inf to `torch.where`, whose backward passes the gradient only where the mask
holds, and puts exactly 0 everywhere else: with no valid label, every parameter gradient is 0, never
inf or NaN (unlike `(loss * mask).sum() / mask.sum()`, where inf * 0 = NaN: still flagged).

Verified with torch 2.13 (CPU): with every label missing, the loss is NaN, every gradient is exactly
0 and the parameters stay finite after three steps; with labels present the model trains. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.BCEWithLogitsLoss(reduction="none")
x = torch.randn(6, 8)
batches = [torch.zeros(6, 3), torch.randint(0, 2, (6, 3)).float() * 2 - 1]  # 0 = missing, +-1 = label
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.cat(batches * 2)), batch_size=6)
for (y,) in loader:
    pred = model(x)
    is_valid = y**2 > 0
    loss_mat = criterion(pred.double(), (y + 1) / 2)
    loss_mat = torch.where(is_valid, loss_mat, torch.zeros(loss_mat.shape).to(loss_mat.dtype))
    opt.zero_grad()
    loss = torch.sum(loss_mat) / torch.sum(is_valid)
    loss.backward()
    if not is_valid.any():
        assert torch.isnan(loss)
        assert all((p.grad == 0).all() for p in model.parameters())
    opt.step()
    assert all(torch.isfinite(p).all() for p in model.parameters())
print("OK")

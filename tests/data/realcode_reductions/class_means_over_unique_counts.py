# reduction-of: Person_reID_baseline_pytorch@82ff40fb11b7 instance_loss.py:26 GA402
# false: GA402
# quiet: GA402
"""An instance loss merges the features of samples that share an id: their sum per id (a one-hot
product over `torch.unique(label, return_inverse=True)`'s inverse indices) divided by
`torch.bincount(inverse_indices)`; a class-balanced term divides by `label.unique(return_counts=True)`.

False finding: GA402 suspicious at the division, "a count can be 0". The inverse indices of
`torch.unique` take every value from 0 to the number of unique ids minus one, so the count of each is
at least 1; so is each of `unique`'s own counts. The engine now marks the inverse indices (every
value occurs: Mark.COVERS), their bincount and `return_counts`' counts as > 0; a bincount of other
indices (`bincount(labels, minlength=n)`) can still be 0.

Verified with torch 2.13 (CPU): every count is >= 1 and the loss and gradients are finite over 20
random batches. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
enc = nn.Linear(8, 4)
opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
for it in range(20):
    feature = enc(torch.randn(16, 8))
    label = torch.randint(0, 50, (16,))
    unique_ids, inverse_indices = torch.unique(label, return_inverse=True)
    one_hot = F.one_hot(inverse_indices, num_classes=len(unique_ids)).float()
    counts = torch.bincount(inverse_indices)
    assert (counts >= 1).all()
    merged = torch.matmul(one_hot.T, feature) / counts.view(-1, 1)
    _, per_class = label.unique(return_counts=True)
    assert (per_class >= 1).all()
    loss = merged.pow(2).mean() + (merged.sum(1) / per_class).mean()
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in enc.parameters())
    opt.step()
print("OK")
